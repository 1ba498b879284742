import { Code } from "@connectrpc/connect";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { UserService } from "../../gen/gatehouse/admin/v1/user_pb.js";
import { DomainError } from "../../src/domain/errors.js";
import { parseImportedHash } from "../../src/domain/imported-hash.js";
import { failure } from "../support/errors.js";
import { useTestServer } from "../support/server.js";
import { thrownBy } from "../support/thrown.js";

type Fixtures = { password: string; hashes: { scheme: string; source: string; hash: string }[] };
const load = (name: string) => JSON.parse(readFileSync(new URL(`../fixtures/password-hashes/${name}`, import.meta.url), "utf8")) as Fixtures;
const small = load("hashes.json");
/** Real hashes at the highest accepted parameters, made by make-max-cost-fixtures.sh. */
const maxCost = load("max-cost.json");
const hashOf = (fixtures: Fixtures, scheme: string) => fixtures.hashes.find((f) => f.scheme === scheme)!.hash;

const bcrypt = hashOf(small, "bcrypt-2b"); // $2b$05$…
const argon2 = hashOf(small, "argon2id"); // m=1024,t=2,p=1
const scrypt = hashOf(small, "scrypt"); // ln=10,r=8,p=1
const pbkdf2 = hashOf(small, "pbkdf2-sha256"); // 2000 rounds
const sha256 = "$5$rounds=1000$saltsaltsaltsalt$" + "a".repeat(43);
const sha512 = "$6$rounds=1000$q7T.ds/9xFhA$" + "a".repeat(86);

/** Each accepted maximum (and minimum where one exists) next to the first value past it. */
const boundaries: { name: string; accepted: string; rejected: string; limit: string }[] = [
  { name: "bcrypt cost", accepted: bcrypt.replace("$05$", "$18$"), rejected: bcrypt.replace("$05$", "$19$"), limit: "18" },
  { name: "bcrypt cost (lower bound)", accepted: bcrypt.replace("$05$", "$04$"), rejected: bcrypt.replace("$05$", "$03$"), limit: "4" },
  { name: "argon2 m (KiB)", accepted: argon2.replace("m=1024", "m=262144"), rejected: argon2.replace("m=1024", "m=262145"), limit: "262144" },
  { name: "argon2 t", accepted: argon2.replace("t=2", "t=16"), rejected: argon2.replace("t=2", "t=17"), limit: "16" },
  { name: "argon2 p", accepted: argon2.replace("p=1", "p=16"), rejected: argon2.replace("p=1", "p=17"), limit: "16" },
  { name: "scrypt memory 128·r·N (r=8)", accepted: scrypt.replace("ln=10", "ln=18"), rejected: scrypt.replace("ln=10", "ln=19"), limit: "256 MiB" },
  { name: "scrypt memory 128·r·N (N=2^20)", accepted: scrypt.replace("ln=10,r=8", "ln=20,r=2"), rejected: scrypt.replace("ln=10,r=8", "ln=20,r=3"), limit: "256 MiB" },
  // RFC 7914's N < 2^(16·r): OpenSSL refuses anything else, so such a hash could never be checked.
  { name: "scrypt N below 2^(16·r)", accepted: scrypt.replace("ln=10,r=8", "ln=15,r=1"), rejected: scrypt.replace("ln=10,r=8", "ln=16,r=1"), limit: "2^(16·r)" },
  { name: "scrypt p", accepted: scrypt.replace("p=1", "p=16"), rejected: scrypt.replace("p=1", "p=17"), limit: "16" },
  { name: "pbkdf2 rounds", accepted: pbkdf2.replace("$2000$", "$5000000$"), rejected: pbkdf2.replace("$2000$", "$5000001$"), limit: "5000000" },
  { name: "sha256-crypt rounds", accepted: sha256.replace("rounds=1000", "rounds=1000000"), rejected: sha256.replace("rounds=1000", "rounds=1000001"), limit: "1000000" },
  { name: "sha512-crypt rounds", accepted: sha512.replace("rounds=1000", "rounds=1000000"), rejected: sha512.replace("rounds=1000", "rounds=1000001"), limit: "1000000" },
];

const rejection = (value: string): DomainError => thrownBy(DomainError, () => parseImportedHash(value));

describe("imported hash cost limits, at the parser", () => {
  it("uses boundaries that differ from the base hashes only in the limited parameter", () => {
    for (const { accepted, rejected } of boundaries) expect(accepted).not.toBe(rejected);
  });

  it.each(boundaries.map((b) => [b.name, b] as const))("%s: the limit is accepted, one past it is invalid_argument naming the limit", (_name, boundary) => {
    expect(() => parseImportedHash(boundary.accepted)).not.toThrow();
    const error = rejection(boundary.rejected);
    expect(error).toMatchObject({ kind: "invalid_argument", reason: "hashed_password.malformed" });
    expect(error.violations).toEqual([expect.objectContaining({ field: "hashed_password.value", rule: "hashed_password.malformed" })]);
    expect(error.violations[0]!.description).toContain(boundary.limit);
  });

  it.each(maxCost.hashes.map((f) => [`${f.scheme} (${f.source})`, f.hash] as const))("accepts the real hash at the maximum: %s", (_name, hash) => {
    expect(() => parseImportedHash(hash)).not.toThrow();
  });
});

describe("imported hash cost limits, over CreateHumanUser", () => {
  const t = useTestServer();
  let n = 0;
  const create = (protocol: "connect-json-http1" | "grpc-h2c", value: string) => {
    const userName = `limits-${++n}`;
    return t.clients
      .client(UserService, protocol, { token: t.server.adminToken })
      .createHumanUser({ userName, profile: { firstName: "Ada", lastName: "Lovelace" }, email: { email: `${userName}@example.com` }, hashedPassword: { value } });
  };

  it.each(["connect-json-http1", "grpc-h2c"] as const)("imports every real maximum-cost hash over %s", async (protocol) => {
    for (const fixture of maxCost.hashes) expect((await create(protocol, fixture.hash)).userId).not.toBe("");
  });

  it.each(["connect-json-http1", "grpc-h2c"] as const)("refuses one past each limit over %s with a field violation", async (protocol) => {
    for (const boundary of boundaries) {
      expect(await failure(create(protocol, boundary.rejected))).toMatchObject({
        code: Code.InvalidArgument,
        reason: "hashed_password.malformed",
        fields: ["hashed_password.value"],
        rules: ["hashed_password.malformed"],
      });
    }
  });
});
