import { Code } from "@connectrpc/connect";
import { beforeAll, describe, expect, it } from "vitest";
import { OrganizationService } from "../../gen/gatehouse/admin/v1/organization_pb.js";
import { ImportOutcome, OnConflict, UserService, UserState } from "../../gen/gatehouse/admin/v1/user_pb.js";
import { PROTOCOLS, type Protocol } from "../support/clients.js";
import { failure } from "../support/errors.js";
import { type CreateRequestInit, importedUser, resultShape, streamImport } from "../support/import.js";
import { eventsOf } from "../support/login-client.js";
import { queuedMails } from "../support/outbox.js";
import { useTestServer } from "../support/server.js";

/**
 * ImportHumanUsers and ImportHumanUsersBatch (issue 14, user.proto): every user is checked exactly as CreateHumanUser
 * checks it, a bad user is its own result and never stops the others, results carry the user's index in the stream and
 * every response the last durable index, no mail goes out unless asked for.
 */
const t = useTestServer();
let orgId: string;
beforeAll(async () => {
  ({ organizationId: orgId } = await t.clients.client(OrganizationService, "connect-json-http1", { token: t.server.adminToken }).createOrganization({ name: "Import" }));
});

const users = (protocol: Protocol = "connect-json-http1") => t.clients.client(UserService, protocol, { token: t.server.adminToken, orgId });
/** The protocols with bidirectional streaming (HTTP/2). */
const STREAMING: Protocol[] = ["grpc-h2c", "connect-proto-h2c"];
let n = 0;
const fresh = (prefix: string) => `${prefix}-${++n}`;

/** The codes these errors come with, as Connect names them. */
const CODE_NAMES: Partial<Record<Code, string>> = { [Code.InvalidArgument]: "invalid_argument", [Code.FailedPrecondition]: "failed_precondition" };

/** Users CreateHumanUser refuses, each for another rule (built with fresh names by `bad()`). */
const BAD: [string, (name: string) => Partial<CreateRequestInit>][] = [
  ["a first name over 200 characters", () => ({ profile: { firstName: "f".repeat(201), lastName: "L" } })],
  ["no email", () => ({ email: undefined })],
  ["an invalid email", () => ({ email: { email: "not an address" } })],
  ["an impossible phone", () => ({ phone: { phone: "+41 12" } })],
  ["a weak password", () => ({ hashedPassword: undefined, password: "short" })],
  ["both password and hash", () => ({ password: "Sup3r-secret!" })],
  ["an unsupported hash", () => ({ hashedPassword: { value: "$9$nope" } })],
  ["a user name with a space", (name) => ({ userName: `${name} x` })],
  ["an unknown IDP", () => ({ idps: [{ configId: "no-such-idp", externalUserId: "e" }] })],
  ["U+0000 in a name", () => ({ profile: { firstName: "A\u0000", lastName: "B" } })],
];

describe.each(PROTOCOLS)("ImportHumanUsersBatch over %s", (protocol) => {
  it("creates the good users and answers each bad one with exactly CreateHumanUser's error, in request order", async () => {
    const good = [fresh("good"), fresh("good"), fresh("good")];
    const bad = BAD.map(([, change]) => {
      const name = fresh("bad");
      return importedUser(name, change(name));
    });
    // Good users before, between and after the bad ones.
    const request = [importedUser(good[0]!), ...bad.slice(0, 5), importedUser(good[1]!), ...bad.slice(5), importedUser(good[2]!)];
    const { results } = await users(protocol).importHumanUsersBatch({ users: request });
    expect(results.map((r) => Number(r.index))).toEqual(request.map((_, i) => i));

    for (const [i, imported] of request.entries()) {
      const result = results[i]!;
      if (good.includes(imported.user!.userName!)) {
        expect(resultShape(result)).toMatchObject({ outcome: "created" });
        const { user } = await users().getUser({ userId: result.userId });
        expect(user).toMatchObject({ userName: imported.user!.userName, state: UserState.ACTIVE });
        continue;
      }
      expect(result.outcome, BAD[bad.indexOf(imported)]![0]).toBe(ImportOutcome.FAILED);
      expect(result.userId).toBe("");
      // The same user sent to CreateHumanUser: the same code, reason, metadata and field violations.
      const single = await failure(users(protocol).createHumanUser(imported.user!));
      const error = result.error!;
      expect({ code: error.code, reason: error.errorInfo?.reason, metadata: error.errorInfo?.metadata, fields: error.fieldViolations.map((v) => v.field), rules: error.fieldViolations.map((v) => v.reason) }).toEqual({
        code: CODE_NAMES[single.code as Code],
        reason: single.reason,
        metadata: single.metadata,
        fields: single.fields,
        rules: single.rules,
      });
      expect(error.message).toBe(single.message);
      expect(error.errorInfo?.domain).toBe("gatehouse");
    }
  });
});

describe.each(STREAMING)("ImportHumanUsers over %s", (protocol) => {
  it("numbers users across the stream's messages, answers each chunk once, in order, with its last durable index", async () => {
    const names = Array.from({ length: 7 }, () => fresh("streamed"));
    const responses = await streamImport(users(protocol), [
      { users: names.slice(0, 3).map((name) => importedUser(name)) },
      { users: [importedUser(names[3]!, { email: { email: "broken" } }), importedUser(names[4]!)] },
      { users: names.slice(5).map((name) => importedUser(name)) },
    ]);
    expect(responses.map((r) => r.results.map((result) => Number(result.index)))).toEqual([[0, 1, 2], [3, 4], [5, 6]]);
    expect(responses.map((r) => Number(r.lastDurableIndex))).toEqual([2, 4, 6]);
    expect(responses.flatMap((r) => r.results.map((result) => resultShape(result).outcome))).toEqual(["created", "created", "created", "failed", "created", "created", "created"]);
    const listed = await users().listUsers({ pageSize: 1000 });
    const imported = listed.users.filter((user) => names.includes(user.userName)).map((user) => user.userName);
    expect(imported.sort()).toEqual([...names.slice(0, 3), ...names.slice(4)].sort());
  });

  it("cuts a chunk before a user the chunk already has: the second meets the first as an existing user", async () => {
    const [a, b] = [fresh("twice"), fresh("twice")];
    const responses = await streamImport(users(protocol), [
      { users: [importedUser(a), importedUser(b), importedUser(a.toUpperCase()), importedUser(fresh("after"))], onConflict: OnConflict.SKIP },
    ]);
    expect(responses.map((r) => Number(r.lastDurableIndex))).toEqual([1, 3]);
    const results = responses.flatMap((r) => r.results);
    expect(results.map((r) => resultShape(r).outcome)).toEqual(["created", "created", "skipped", "created"]);
    expect(results[2]!.userId).toBe(results[0]!.userId);
  });
});

describe("stream and message rules", () => {
  it("refuses a message without users or with more than 1 000, and an unknown on_conflict, as the stream's error", async () => {
    const tooMany = Array.from({ length: 1001 }, (_, i) => importedUser(`many-${i}`));
    for (const request of [{ users: [] }, { users: tooMany }, { users: [importedUser(fresh("x"))], onConflict: 9 as OnConflict }]) {
      const error = await failure(users().importHumanUsersBatch(request));
      expect(error).toMatchObject({ code: Code.InvalidArgument, reason: "request.invalid" });
      const streamed = await failure(streamImport(users("grpc-h2c"), [request]));
      expect(streamed).toMatchObject({ code: Code.InvalidArgument, reason: "request.invalid" });
    }
    // None of the 1 001 was imported.
    expect((await users().listUsers({ userName: "many-0" })).users).toEqual([]);
  });

  it("checks external_id (at most 200 characters) as a field of the user, and trims names before their rules", async () => {
    const name = fresh("trimmed");
    const { results } = await users().importHumanUsersBatch({
      users: [importedUser(fresh("long-id"), {}, "x".repeat(201)), importedUser(`  ${name}  `, { profile: { firstName: "  Ada ", lastName: " King " }, email: { email: `${name}@example.com` } }, "y".repeat(200))],
    });
    expect(resultShape(results[0]!)).toMatchObject({ outcome: "failed", code: "invalid_argument", reason: "request.invalid", fields: ["external_id"] });
    expect(resultShape(results[1]!)).toMatchObject({ outcome: "created" });
    const { user } = await users().getUser({ userId: results[1]!.userId });
    expect(user).toMatchObject({ userName: name, type: { case: "human", value: { profile: { firstName: "Ada", lastName: "King" } } } });
  });

  it("refuses a passwordless registration (a link for one person) for that user only", async () => {
    const { results } = await users().importHumanUsersBatch({ users: [importedUser(fresh("passkey"), { requestPasswordlessRegistration: true }), importedUser(fresh("plain"))] });
    expect(results.map(resultShape)).toMatchObject([
      { outcome: "failed", code: "invalid_argument", reason: "import.passwordless_unsupported", fields: ["request_passwordless_registration"] },
      { outcome: "created" },
    ]);
    // Said to a person too: a message, and the violation's description and rule.
    expect(results[0]!.error?.message).toMatch(/passwordless/);
    expect(results[0]!.error?.fieldViolations).toEqual([expect.objectContaining({ description: expect.stringMatching(/import/), reason: "import.passwordless_unsupported" })]);
  });

  it("hashes a plain password with argon2id and keeps an imported hash as given; the event says which, never the value", async () => {
    const { results } = await users().importHumanUsersBatch({
      users: [importedUser(fresh("plain-pw"), { hashedPassword: undefined, password: "Sup3r-secret!" }), importedUser(fresh("hashed"))],
    });
    const [plain, hashed] = results.map((r) => r.userId);
    const added = async (userId: string) => (await eventsOf(t, "user", userId!)).find((e) => e.type === "user.human.added")!.payload;
    expect((await added(plain!))["password"]).toBe("set");
    expect((await added(hashed!))["password"]).toBe("imported:bcrypt");
    expect(JSON.stringify(await eventsOf(t, "user", plain!))).not.toContain("Sup3r-secret!");
  });
});

describe("mails", () => {
  /** A user that starts INITIAL and would get an initialization mail from CreateHumanUser. */
  const initial = (name: string) => importedUser(name, { email: { email: `${name}@example.com`, isEmailVerified: false }, hashedPassword: undefined });

  it("sends none, and issues no code, unless the request asks; the user starts INITIAL all the same", async () => {
    const quiet = fresh("quiet");
    const { results } = await users().importHumanUsersBatch({ users: [initial(quiet)] });
    const { user } = await users().getUser({ userId: results[0]!.userId });
    expect(user?.state).toBe(UserState.INITIAL);
    expect((await queuedMails(t.server)).filter((mail) => mail.recipient === `${quiet}@example.com`)).toEqual([]);
    expect((await eventsOf(t, "user", results[0]!.userId)).map((e) => e.type)).toEqual(["user.human.added"]);

    const told = fresh("told");
    await users("grpc-h2c").importHumanUsersBatch({ users: [initial(told)], sendInitializationMails: true });
    const mails = (await queuedMails(t.server)).filter((mail) => mail.recipient === `${told}@example.com`);
    expect(mails.map((mail) => mail.template)).toEqual(["user.initialization"]);
  });
});

describe("errors of the call itself", () => {
  it("never reports a user's error as the call's: a batch of nothing but bad users succeeds with their results", async () => {
    const response = await users("grpc-web-http1").importHumanUsersBatch({ users: [importedUser(fresh("b"), { email: { email: "x" } })] });
    expect(response.results.map(resultShape)).toMatchObject([{ outcome: "failed", reason: "email.invalid" }]);
  });
});
