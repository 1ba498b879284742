import { Code, ConnectError } from "@connectrpc/connect";
import { endedImportError } from "../../src/api/user/import-human-users.js";
import { beforeAll, describe, expect, it } from "vitest";
import { OrganizationService } from "../../gen/gatehouse/admin/v1/organization_pb.js";
import { ImportOutcome, UserService } from "../../gen/gatehouse/admin/v1/user_pb.js";
import { failure } from "../support/errors.js";
import { importedUser, streamImport } from "../support/import.js";
import { useTestServer } from "../support/server.js";

/**
 * Work a caller triggers ends with its call (issue 14, user.proto "Passwords"): an import whose call is over — the
 * client went away, or its deadline passed — stops. The plain passwords it still had waiting for a core are never
 * hashed, and its unfinished chunk is not committed, so a caller cannot queue minutes of argon2id for the server and
 * leave, ahead of every import that comes after it.
 */
const t = useTestServer();
/** More plain passwords than two cores hash before the deadline below (argon2id at 19 MiB is about 12 ms of CPU). */
const ABANDONED_USERS = 200;
const DEADLINE_MS = 500;

const plainPasswordUsers = (prefix: string, count: number) =>
  Array.from({ length: count }, (_, i) => importedUser(`${prefix}-${i}`, { hashedPassword: undefined, password: `Cancelled-import-${i}!` }));

async function organization(name: string) {
  const orgs = t.clients.client(OrganizationService, "connect-json-http1", { token: t.server.adminToken });
  return (await orgs.createOrganization({ name })).organizationId;
}

const usersIn = (orgId: string) => t.clients.client(UserService, "connect-json-http1", { token: t.server.adminToken, orgId });

describe("an import whose call ended stops", () => {
  let abandonedOrg: string;
  let laterOrg: string;
  beforeAll(async () => {
    abandonedOrg = await organization("Import abandoned");
    laterOrg = await organization("Import after the abandoned one");
  });

  it("a batch whose deadline passed hashes no more of its passwords and commits none of its users; the next import is not held behind them", async () => {
    const abandoned = await failure(usersIn(abandonedOrg).importHumanUsersBatch({ users: plainPasswordUsers("abandoned", ABANDONED_USERS) }, { timeoutMs: DEADLINE_MS }));
    expect(abandoned.code).toBe(Code.DeadlineExceeded);

    // The server hashes a later import's passwords once every earlier one waiting for a core is done: its answer comes
    // after the abandoned batch's hashes, and its commit, would have been made.
    const later = await usersIn(laterOrg).importHumanUsersBatch({ users: plainPasswordUsers("later", 4) });
    expect(later.results.map((r) => r.outcome)).toEqual(Array(4).fill(ImportOutcome.CREATED));

    const { details, users } = await usersIn(abandonedOrg).listUsers({ pageSize: 1000 });
    expect({ total: details?.totalResult, users: users.length }).toEqual({ total: 0n, users: 0 });
  });
});

describe("an import whose client went away stops", () => {
  it("a batch over HTTP/1.1 whose client closed the connection commits none of its users, and the server reports no fault of its own", async () => {
    const orgId = await organization("Import left by its client");
    const laterOrg = await organization("Import after the client left");
    // The client gives up after DEADLINE_MS (no deadline is sent: the server sees only the connection close).
    const left = await failure(usersIn(orgId).importHumanUsersBatch({ users: plainPasswordUsers("left", ABANDONED_USERS) }, { signal: AbortSignal.timeout(DEADLINE_MS) }));
    expect(left.code).toBe(Code.Canceled);

    const later = await usersIn(laterOrg).importHumanUsersBatch({ users: plainPasswordUsers("after-left", 4) });
    expect(later.results.map((r) => r.outcome)).toEqual(Array(4).fill(ImportOutcome.CREATED));
    expect((await usersIn(orgId).listUsers({ pageSize: 1000 })).users).toEqual([]);
    expect(t.server.logs.parsed().filter((line) => line["msg"] === "internal error")).toEqual([]);
  });
});

describe("an import stream whose lifetime is over stops", () => {
  const short = useTestServer({ config: { streamMaxLifetimeMs: 300 } });
  const admin = (orgId: string, protocol: "grpc-h2c" | "connect-json-http1" = "connect-json-http1") =>
    short.clients.client(UserService, protocol, { token: short.server.adminToken, orgId });

  it("ends normally with no result for the unfinished chunk, commits none of it, and the server reports no fault of its own", async () => {
    const orgs = short.clients.client(OrganizationService, "connect-json-http1", { token: short.server.adminToken });
    const { organizationId: streamOrg } = await orgs.createOrganization({ name: "Import stream over" });
    const { organizationId: laterOrg } = await orgs.createOrganization({ name: "Import after the stream" });

    const responses = await streamImport(admin(streamOrg, "grpc-h2c"), [{ users: plainPasswordUsers("streamed", ABANDONED_USERS) }]);
    expect(responses).toEqual([]);

    const later = await admin(laterOrg).importHumanUsersBatch({ users: plainPasswordUsers("after-stream", 4) });
    expect(later.results.map((r) => r.outcome)).toEqual(Array(4).fill(ImportOutcome.CREATED));
    expect((await admin(streamOrg).listUsers({ pageSize: 1000 })).users).toEqual([]);
    expect(short.server.logs.parsed().filter((line) => line["msg"] === "internal error")).toEqual([]);
  });
});

describe("the answer of an import whose call ended", () => {
  const ended = (reason: unknown) => {
    const call = new AbortController();
    call.abort(reason);
    return endedImportError(new Error("what the import threw"), call.signal) as ConnectError;
  };

  it("is deadline_exceeded for a deadline, and canceled for anything else that ended it, whatever code that carried", () => {
    expect(ended(new ConnectError("the operation timed out", Code.DeadlineExceeded)).code).toBe(Code.DeadlineExceeded);
    // What a client's HTTP/2 reset code or a socket error becomes in connect-node: the client must not choose the code.
    for (const code of [Code.Internal, Code.ResourceExhausted, Code.PermissionDenied, Code.Unavailable, Code.Unknown]) {
      expect(ended(new ConnectError("stream reset by the client", code)).code, Code[code]).toBe(Code.Canceled);
    }
    expect(ended(undefined).code).toBe(Code.Canceled);
    expect(ended(new Error("socket hang up")).code).toBe(Code.Canceled);
  });

  it("is the import's own error while the call goes on", () => {
    const error = new Error("what the import threw");
    expect(endedImportError(error, new AbortController().signal)).toBe(error);
  });
});
