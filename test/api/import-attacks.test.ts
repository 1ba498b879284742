import { Code, type Client } from "@connectrpc/connect";
import { beforeAll, describe, expect, it } from "vitest";
import { InstanceService } from "../../gen/gatehouse/admin/v1/instance_pb.js";
import { OrganizationService } from "../../gen/gatehouse/admin/v1/organization_pb.js";
import { type ImportHumanUsersResponse, OnConflict, UserService } from "../../gen/gatehouse/admin/v1/user_pb.js";
import { failure } from "../support/errors.js";
import { BCRYPT_HASH, type ImportRequestInit, importedUser, resultShape, streamImport } from "../support/import.js";
import { eventsOf, storedPassword } from "../support/login-client.js";
import { useTestServer } from "../support/server.js";
import { storedRows } from "../support/stored-rows.js";
import { type Actor, createActor } from "../support/world.js";

/**
 * An attacker's look at ImportHumanUsers / ImportHumanUsersBatch (issue 14): an import may do to a user only what the
 * unary RPCs let its caller do (permission, privilege ceiling, organization), learns nothing about a credential it
 * could not set, obeys a change of its caller's rights mid-stream, refuses input CreateHumanUser refuses, and keeps
 * secrets out of results, events and logs.
 */
const t = useTestServer();
let orgId: string;
let otherOrgId: string;
let manager: Actor;
let n = 0;
const fresh = (prefix: string) => `atk-${prefix}-${++n}`;
/** The password BCRYPT_HASH was made from. */
const BCRYPT_PASSWORD = "Analytical-Engine-1843";

beforeAll(async () => {
  const orgs = t.clients.client(OrganizationService, "connect-json-http1", { token: t.server.adminToken });
  ({ organizationId: orgId } = await orgs.createOrganization({ name: "Import attacks" }));
  ({ organizationId: otherOrgId } = await orgs.createOrganization({ name: "Import attacks elsewhere" }));
  manager = await createActor(t.clients, t.server.adminToken, orgId, "atk-manager", ["ORG_USER_MANAGER"]);
});

type Protocol = "connect-json-http1" | "grpc-h2c" | "connect-proto-h2c";
const usersAs = (token: string, org = orgId, protocol: Protocol = "connect-json-http1") => t.clients.client(UserService, protocol, { token, orgId: org });
const admin = (org = orgId) => usersAs(t.server.adminToken, org);
const orgAdmin = (org = orgId) => t.clients.client(OrganizationService, "connect-json-http1", { token: t.server.adminToken, orgId: org });

/** An import stream whose messages the test sends one at a time, reading each answer as it comes. */
function openStream(users: Client<typeof UserService>) {
  const queue: (ImportRequestInit | undefined)[] = [];
  let wake = () => {};
  async function* requests() {
    for (;;) {
      while (queue.length === 0) await new Promise<void>((resolve) => (wake = resolve));
      const next = queue.shift();
      if (next === undefined) return;
      yield next;
    }
  }
  const responses = users.importHumanUsers(requests())[Symbol.asyncIterator]();
  return {
    send(message: ImportRequestInit | undefined) {
      queue.push(message);
      wake();
    },
    next: (): Promise<IteratorResult<ImportHumanUsersResponse>> => responses.next(),
  };
}

describe("the privilege ceiling", () => {
  it("lets no importer test a password of a user above it: right or wrong, an UPDATE with a plain password answers principal.privileged", async () => {
    const name = fresh("owner");
    const { results } = await admin().importHumanUsersBatch({ users: [importedUser(name)] });
    const ownerId = results[0]!.userId;
    await orgAdmin().addOrganizationMember({ userId: ownerId, roles: ["ORG_OWNER"] });
    const before = await storedPassword(t, ownerId);
    // Everything else as stored, so only the password could make a difference.
    const guess = (password: string) => importedUser(name, { hashedPassword: undefined, password });
    const answers = await usersAs(manager.token).importHumanUsersBatch({ users: [guess(BCRYPT_PASSWORD), guess("Wrong-Guess-1234567")], onConflict: OnConflict.UPDATE });
    expect(answers.results.map(resultShape)).toMatchObject([
      { outcome: "failed", code: "permission_denied", reason: "principal.privileged" },
      { outcome: "failed", code: "permission_denied", reason: "principal.privileged" },
    ]);
    expect(await storedPassword(t, ownerId)).toEqual(before);
  });

  it("refuses an UPDATE of a human holding an instance role (IAM_OWNER) by an organization's user manager", async () => {
    const name = fresh("iam");
    const { results } = await admin().importHumanUsersBatch({ users: [importedUser(name)] });
    const userId = results[0]!.userId;
    await t.clients.client(InstanceService, "connect-json-http1", { token: t.server.adminToken }).addInstanceMember({ userId, roles: ["IAM_OWNER"] });
    const takeover = importedUser(name, { email: { email: "attacker@example.com", isEmailVerified: true }, hashedPassword: { value: "$2b$04$Ie2y6PSnAUxBWobJWvg4we4fjNZ8UZoT1963VWkyhwHh15cZAPoSO" } });
    const answer = await usersAs(manager.token).importHumanUsersBatch({ users: [takeover], onConflict: OnConflict.UPDATE });
    expect(answer.results.map(resultShape)).toMatchObject([{ outcome: "failed", reason: "principal.privileged" }]);
    expect((await storedPassword(t, userId)).hash).toBe(BCRYPT_HASH);
  });

  it("never skips, updates or reveals more about a user of another organization or a machine user than CreateHumanUser does", async () => {
    const elsewhere = fresh("elsewhere");
    const { results } = await admin(otherOrgId).importHumanUsersBatch({ users: [importedUser(elsewhere, {}, "shared-id")] });
    const strangerId = results[0]!.userId;
    const machine = await createActor(t.clients, t.server.adminToken, orgId, fresh("machine"));
    const { userName: machineName } = (await admin().getUser({ userId: machine.userId })).user!;
    for (const onConflict of [OnConflict.FAIL, OnConflict.SKIP, OnConflict.UPDATE]) {
      const answer = await usersAs(manager.token).importHumanUsersBatch({
        users: [importedUser(elsewhere, { profile: { firstName: "Mine", lastName: "Now" } }), importedUser(machineName, {}), importedUser(elsewhere.toUpperCase(), {}, "shared-id")],
        onConflict,
      });
      expect(answer.results.map(resultShape), OnConflict[onConflict]).toMatchObject([
        { outcome: "failed", code: "already_exists", reason: "user.already_exists" },
        { outcome: "failed", code: "already_exists", reason: "user.already_exists" },
        { outcome: "failed", code: "already_exists", reason: "user.already_exists" },
      ]);
      // Exactly what CreateHumanUser tells the same caller about a name taken in another organization.
      const single = await failure(usersAs(manager.token).createHumanUser(importedUser(elsewhere).user!));
      expect({ code: single.code, reason: single.reason, message: single.message }).toEqual({
        code: Code.AlreadyExists,
        reason: answer.results[0]!.error!.errorInfo!.reason,
        message: answer.results[0]!.error!.message,
      });
    }
    // The stranger's external id is its organization's own: the same one is free here.
    const mine = await usersAs(manager.token).importHumanUsersBatch({ users: [importedUser(fresh("own"), {}, "shared-id")] });
    expect(mine.results.map(resultShape)).toMatchObject([{ outcome: "created" }]);
    const { user } = await admin(otherOrgId).getUser({ userId: strangerId });
    expect(user?.type.case === "human" && user.type.value.profile?.firstName).toBe("Imported");
  });

  it("re-activates no deactivated or locked user, and leaves memberships and tokens as they are", async () => {
    const [off, held] = [fresh("off"), fresh("held")];
    const created = await admin().importHumanUsersBatch({ users: [importedUser(off), importedUser(held)] });
    const [offId, heldId] = created.results.map((r) => r.userId) as [string, string];
    await admin().deactivateUser({ userId: offId });
    await admin().lockUser({ userId: heldId });
    const stateOf = async (userId: string) => (await storedRows<{ inactive: unknown; locked: unknown; state: string }>(t.server, "select inactive, locked, state from users where id = ?", userId))[0]!;
    const flags = [await stateOf(offId), await stateOf(heldId)];
    const changed = { profile: { firstName: "Back", lastName: "Again" }, hashedPassword: { value: "$2b$04$Ie2y6PSnAUxBWobJWvg4we4fjNZ8UZoT1963VWkyhwHh15cZAPoSO" } };
    const answer = await usersAs(manager.token).importHumanUsersBatch({ users: [importedUser(off, changed), importedUser(held, changed)], onConflict: OnConflict.UPDATE });
    expect(answer.results.map(resultShape)).toMatchObject([{ outcome: "updated" }, { outcome: "updated" }]);
    expect([await stateOf(offId), await stateOf(heldId)]).toEqual(flags);
  });
});

describe("codes a re-import leaves behind", () => {
  it("voids a pending init code when an UPDATE sets the password: its link would set another one over it", async () => {
    const name = fresh("init");
    // Created without a password: an initialization mail with an init code.
    const { userId } = await admin().createHumanUser({ userName: name, profile: { firstName: "Ada", lastName: "King" }, email: { email: `${name}@example.com` } });
    const pending = async () => (await storedRows<{ kind: string }>(t.server, "select kind from one_time_codes where user_id = ? and used_at is null", userId)).map((row) => row.kind).sort();
    expect(await pending()).toContain("init");
    const answer = await usersAs(manager.token).importHumanUsersBatch({ users: [importedUser(name, { email: { email: `${name}@example.com` } })], onConflict: OnConflict.UPDATE });
    expect(answer.results.map(resultShape)).toMatchObject([{ outcome: "updated", userId }]);
    expect((await storedPassword(t, userId)).hash).toBe(BCRYPT_HASH);
    expect(await pending()).not.toContain("init");
  });
});

describe("a caller whose rights end during a stream", () => {
  const cases: [string, (actor: Actor) => Promise<unknown>, Code][] = [
    ["deactivated", (actor) => admin().deactivateUser({ userId: actor.userId }), Code.Unauthenticated],
    ["locked", (actor) => admin().lockUser({ userId: actor.userId }), Code.Unauthenticated],
    ["its role removed", (actor) => orgAdmin().removeOrganizationMember({ userId: actor.userId }), Code.PermissionDenied],
    ["its token removed", async (actor) => {
      const { tokens } = await admin().listPersonalAccessTokens({ userId: actor.userId });
      for (const token of tokens) await admin().removePersonalAccessToken({ userId: actor.userId, tokenId: token.tokenId });
    }, Code.Unauthenticated],
  ];
  it.each(cases)("imports nothing more once the caller is %s: the next message ends the stream with the error a new call would get", async (label, revoke, code) => {
    const actor = await createActor(t.clients, t.server.adminToken, orgId, fresh("revoked"), ["ORG_USER_MANAGER"]);
    const stream = openStream(usersAs(actor.token, orgId, "grpc-h2c"));
    const [before, after] = [fresh("before"), fresh("after")];
    stream.send({ users: [importedUser(before)] });
    const first = await stream.next();
    expect(first.done ? [] : first.value.results.map(resultShape)).toMatchObject([{ outcome: "created" }]);
    await revoke(actor);
    expect((await failure(usersAs(actor.token).listUsers({}))).code, label).toBe(code);
    stream.send({ users: [importedUser(after)] });
    expect(await failure(stream.next())).toMatchObject({ code });
    expect((await admin().listUsers({ userName: after })).users).toEqual([]);
  });
});

describe("input CreateHumanUser refuses", () => {
  const costly: [string, string][] = [
    ["bcrypt cost 31", "$2b$31$QP0VjXns17EhTqK9lqvYZegW1llDeoGfRN8p3CaXkofbgMJuWm8XG"],
    ["scrypt with N = 2^40", "$scrypt$ln=40,r=8,p=1$c2FsdHNhbHQ$0AyXBT2DQ7YjYRpGdA8TbLSSZCwKYzOJwbJ3YGv9ZyU"],
    ["argon2 with 4 GiB", "$argon2id$v=19$m=4194304,t=2,p=1$c2FsdHNhbHRzYWx0$0AyXBT2DQ7YjYRpGdA8TbLSSZCwKYzOJwbJ3YGv9ZyU"],
    ["pbkdf2 with 10^9 rounds", "$pbkdf2-sha256$1000000000$c2FsdA$0AyXBT2DQ7YjYRpGdA8TbLSSZCwKYzOJwbJ3YGv9ZyU"],
  ];
  it("refuses costly hashes, short passwords and NUL bytes per user, exactly as CreateHumanUser, without echoing the secret", async () => {
    const users = [
      ...costly.map(([, hash]) => importedUser(fresh("costly"), { hashedPassword: { value: hash } })),
      importedUser(fresh("short"), { hashedPassword: undefined, password: "x" }),
      importedUser(fresh("nul"), { hashedPassword: undefined, password: "Nul-\u0000-Password-123" }),
      importedUser(fresh("phone"), { phone: { phone: "call me" } }),
      importedUser(fresh("ext"), {}, "e".repeat(201)),
      importedUser(fresh("ext-nul"), {}, "id\u0000"),
    ];
    const started = Date.now();
    const { results } = await usersAs(manager.token, orgId, "connect-proto-h2c").importHumanUsersBatch({ users, onConflict: OnConflict.UPDATE });
    // Refused before any work: a cost-31 bcrypt alone would take days.
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(results.every((r) => resultShape(r).outcome === "failed")).toBe(true);
    for (const [i, imported] of users.entries()) {
      const error = results[i]!.error!;
      const secret = imported.user!.password || imported.user!.hashedPassword?.value;
      if (secret) expect(JSON.stringify(error)).not.toContain(secret);
      if (imported.externalId !== "") {
        expect(error.fieldViolations.map((v) => v.field)).toEqual(["external_id"]);
        continue;
      }
      const single = await failure(usersAs(manager.token).createHumanUser(imported.user!));
      expect({ reason: error.errorInfo?.reason, fields: error.fieldViolations.map((v) => v.field), message: error.message }, costly[i]?.[0]).toEqual({
        reason: single.reason,
        fields: single.fields,
        message: single.message,
      });
    }
  });

  it("refuses a message of more than 1 000 users as a whole, before any is imported", async () => {
    const prefix = fresh("flood");
    const users = Array.from({ length: 1001 }, (_, i) => importedUser(`${prefix}-${i}`));
    expect(await failure(usersAs(manager.token).importHumanUsersBatch({ users }))).toMatchObject({ code: Code.InvalidArgument, reason: "request.invalid", fields: ["users"] });
    expect(await failure(streamImport(usersAs(manager.token, orgId, "grpc-h2c"), [{ users }]))).toMatchObject({ code: Code.InvalidArgument, reason: "request.invalid" });
    expect((await admin().listUsers({ userName: `${prefix}-0` })).users).toEqual([]);
  });
});

describe("secrets", () => {
  it("keep out of results, events and logs; no mail and no code without send_initialization_mails", async () => {
    const [hashed, plain] = [fresh("hashed"), fresh("plain")];
    const password = "Plain-Secret-Password-42";
    const newHash = "$2b$04$Ie2y6PSnAUxBWobJWvg4we4fjNZ8UZoT1963VWkyhwHh15cZAPoSO";
    const created = await usersAs(manager.token).importHumanUsersBatch({
      users: [importedUser(hashed, { email: { email: `${hashed}@example.com` } }), importedUser(plain, { hashedPassword: undefined, password, email: { email: `${plain}@example.com` } })],
    });
    const ids = created.results.map((r) => r.userId);
    const updated = await usersAs(manager.token).importHumanUsersBatch({
      users: [importedUser(hashed, { hashedPassword: { value: newHash }, email: { email: `${hashed}@example.com` } }), importedUser(plain, { hashedPassword: undefined, password: `${password}!`, email: { email: `${plain}@example.com` } })],
      onConflict: OnConflict.UPDATE,
    });
    expect(updated.results.map(resultShape)).toMatchObject([{ outcome: "updated" }, { outcome: "updated" }]);
    const seen = JSON.stringify([created.results, updated.results, ...(await Promise.all(ids.map((id) => eventsOf(t, "user", id))))], (_, v) => (typeof v === "bigint" ? String(v) : v));
    for (const secret of [BCRYPT_HASH, newHash, password, "$argon2id$"]) {
      expect(seen).not.toContain(secret);
      expect(t.server.logs.text).not.toContain(secret);
    }
    const left = await storedRows<{ n: number }>(t.server, `select count(*) as n from one_time_codes where user_id in (?, ?)`, ids[0], ids[1]);
    const mails = await storedRows<{ n: number }>(t.server, `select count(*) as n from outbox where user_id in (?, ?)`, ids[0], ids[1]);
    expect([Number(left[0]!.n), Number(mails[0]!.n)]).toEqual([0, 0]);
  });
});

describe("a client that never reads the answers", () => {
  it("is held back by flow control: the server stops importing while its answers are unread, and goes on once they are read", async () => {
    const { connect } = await import("node:http2");
    const { create, toBinary } = await import("@bufbuild/protobuf");
    const { ImportHumanUsersRequestSchema } = await import("../../gen/gatehouse/admin/v1/user_pb.js");
    const prefix = fresh("unread");
    const [messages, perMessage] = [40, 500];
    const session = connect(t.server.url);
    try {
      const stream = session.request({
        ":method": "POST",
        ":path": "/gatehouse.admin.v1.UserService/ImportHumanUsers",
        "content-type": "application/grpc+proto",
        te: "trailers",
        authorization: `Bearer ${manager.token}`,
      });
      // Never read: the client's receive window is not reopened, so the server's answers cannot leave.
      stream.pause();
      let sent = 0;
      const writer = (async () => {
        for (; sent < messages; sent++) {
          const users = Array.from({ length: perMessage }, (_, i) => importedUser(`${prefix}-${sent}-${i}`));
          const body = toBinary(ImportHumanUsersRequestSchema, create(ImportHumanUsersRequestSchema, { users }));
          const frame = Buffer.alloc(5 + body.length);
          frame.writeUInt32BE(body.length, 1);
          frame.set(body, 5);
          if (!stream.write(frame)) await new Promise((resolve) => stream.once("drain", resolve));
        }
        stream.end();
      })();
      const imported = async () => Number((await storedRows<{ n: number }>(t.server, "select count(*) as n from users where user_name_key like ?", `${prefix}-%`))[0]!.n);
      // Wait until the server stops: the same count twice, a second apart.
      let [last, now] = [-1, await imported()];
      while (now !== last) {
        await new Promise((resolve) => setTimeout(resolve, 1000));
        [last, now] = [now, await imported()];
      }
      // Here it stops after 4 messages (the answers that fit the windows and buffers); far below what was offered.
      expect(now).toBeLessThanOrEqual(10 * perMessage);
      expect(sent).toBeLessThan(messages);
      stream.resume();
      await writer;
      await new Promise((resolve) => stream.on("end", resolve));
      expect(await imported()).toBe(messages * perMessage);
    } finally {
      session.close();
    }
  }, 120_000);
});
