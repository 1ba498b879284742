import { Code } from "@connectrpc/connect";
import Database from "better-sqlite3";
import { beforeAll, describe, expect, it } from "vitest";
import { IdentityProviderService } from "../../gen/gatehouse/admin/v1/identity_provider_pb.js";
import { OrganizationService } from "../../gen/gatehouse/admin/v1/organization_pb.js";
import { UserService } from "../../gen/gatehouse/admin/v1/user_pb.js";
import { errorShape } from "../support/errors.js";
import { useTestServer } from "../support/server.js";

/**
 * RemoveIdentityProvider racing CreateHumanUser with a link to that IDP: whichever commits first,
 * no link may be left naming a removed IDP (the link column has no foreign key, so the store checks).
 */
const t = useTestServer();
let orgId: string;
const ROUNDS = 30;

beforeAll(async () => {
  ({ organizationId: orgId } = await t.clients.client(OrganizationService, "connect-json-http1", { token: t.server.adminToken }).createOrganization({ name: "IDP race" }));
});

function danglingLinks(): number {
  const db = new Database(`${t.server.dataDir}/gatehouse.db`, { readonly: true, fileMustExist: true });
  try {
    const sql = "SELECT count(*) AS n FROM user_idp_links WHERE idp_id NOT IN (SELECT id FROM identity_providers)";
    return (db.prepare(sql).get() as { n: number }).n;
  } finally {
    db.close();
  }
}

/** The answer of a call that may fail: "ok", or its code and reason. */
async function outcome(call: Promise<unknown>): Promise<string> {
  try {
    await call;
    return "ok";
  } catch (error) {
    const { code, reason } = errorShape(error);
    return `${Code[code]}:${reason}`;
  }
}

describe("removing an IDP while a user is created with a link to it", () => {
  it("never leaves a link to a removed IDP, and each side answers with a typed error or success", async () => {
    const idps = t.clients.client(IdentityProviderService, "connect-proto-h2c", { token: t.server.adminToken, orgId });
    const users = t.clients.client(UserService, "grpc-h2c", { token: t.server.adminToken, orgId });
    const seen = new Set<string>();
    for (let round = 0; round < ROUNDS; round++) {
      const { idpId } = await idps.createIdentityProvider({ name: `Racy ${round}`, issuer: "https://sso.example.com", clientId: "gh", clientSecret: "x" });
      const create = outcome(
        users.createHumanUser({
          userName: `racer-${round}`,
          profile: { firstName: "Ra", lastName: "Cer" },
          email: { email: `racer-${round}@example.com`, isEmailVerified: true },
          // Hashed after the IDP check and before the commit: the window a removal can fall into.
          password: "Racy-Passw0rd!",
          idps: [{ configId: idpId, externalUserId: `ext-${round}` }],
        }),
      );
      // The removal starts 0 to 28 ms after the creation, so over the rounds it lands before the
      // creation's IDP check, inside its hashing window, and after its commit. The assertions hold
      // for every interleaving; the stagger only makes the rounds cover them.
      await new Promise((resolve) => setTimeout(resolve, (round % 15) * 2));
      const remove = outcome(idps.removeIdentityProvider({ idpId }));
      const answers = await Promise.all([create, remove]);
      seen.add(answers.join(" / "));
      for (const answer of answers) expect(answer).toMatch(/^(ok|FailedPrecondition:idp\.not_found|Aborted:store\.condition_failed)$/);
      expect(danglingLinks()).toBe(0);
    }
    console.log(`create / remove outcomes over ${ROUNDS} rounds: ${[...seen].join("; ")}`);
  });
});
