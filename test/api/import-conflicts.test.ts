import { Code } from "@connectrpc/connect";
import { beforeAll, describe, expect, it } from "vitest";
import { OrganizationService } from "../../gen/gatehouse/admin/v1/organization_pb.js";
import { OnConflict, UserService, UserState } from "../../gen/gatehouse/admin/v1/user_pb.js";
import { failure } from "../support/errors.js";
import { BCRYPT_HASH, type ImportedUserInit, importedUser, resultShape, streamImport } from "../support/import.js";
import { eventsOf, storedPassword } from "../support/login-client.js";
import { emailCodeIn, lastMailTo } from "../support/outbox.js";
import { useTestServer } from "../support/server.js";
import { initializeUserWithCode } from "../../src/commands/initialize-user.js";

/**
 * ImportHumanUsers' `on_conflict` (issue 14, user.proto): FAIL reports the conflict, SKIP leaves the existing user as it
 * is, UPDATE brings it up to date — and a re-run of the same users changes nothing and appends no event. Only the
 * importer's own users are skipped or updated: a user name held by anyone else is a conflict in every mode.
 */
const t = useTestServer();
let orgId: string;
let otherOrgId: string;
beforeAll(async () => {
  const orgs = t.clients.client(OrganizationService, "connect-json-http1", { token: t.server.adminToken });
  ({ organizationId: orgId } = await orgs.createOrganization({ name: "Conflicts" }));
  ({ organizationId: otherOrgId } = await orgs.createOrganization({ name: "Conflicts elsewhere" }));
});

const users = (protocol: "connect-json-http1" | "grpc-h2c" | "grpc-web-http1" = "connect-json-http1", org = orgId) =>
  t.clients.client(UserService, protocol, { token: t.server.adminToken, orgId: org });
let n = 0;
const fresh = (prefix: string) => `${prefix}-${++n}`;
const importOne = async (user: ImportedUserInit, onConflict: OnConflict, protocol: Parameters<typeof users>[0] = "connect-json-http1") =>
  resultShape((await users(protocol).importHumanUsersBatch({ users: [user], onConflict })).results[0]!);
const eventCount = async (userId: string) => (await eventsOf(t, "user", userId)).length;
const human = async (userId: string) => {
  const { user } = await users().getUser({ userId });
  if (user?.type.case !== "human") throw new Error("not a human user");
  return { state: user.state, ...user.type.value };
};

describe("FAIL (the default)", () => {
  it("reports a taken user name or external id as CreateHumanUser would, and leaves the existing user alone", async () => {
    const name = fresh("taken");
    const first = await importOne(importedUser(name, {}, `src-${name}`), OnConflict.UNSPECIFIED);
    expect(first.outcome).toBe("created");
    const events = await eventCount(first.userId!);
    expect(await importOne(importedUser(name.toUpperCase(), { profile: { firstName: "Other", lastName: "One" } }), OnConflict.FAIL)).toMatchObject({
      outcome: "failed",
      code: "already_exists",
      reason: "user.already_exists",
    });
    // The same answer CreateHumanUser gives.
    expect(await failure(users().createHumanUser(importedUser(name).user!))).toMatchObject({ code: Code.AlreadyExists, reason: "user.already_exists" });
    expect(await importOne(importedUser(fresh("renamed"), {}, `src-${name}`), OnConflict.FAIL)).toMatchObject({ outcome: "failed", reason: "user.external_id.already_exists" });
    expect((await human(first.userId!)).profile?.firstName).toBe("Imported");
    expect(await eventCount(first.userId!)).toBe(events);
  });
});

describe("SKIP", () => {
  it("leaves an existing user as it is and names it; appends nothing", async () => {
    const name = fresh("skipped");
    const { userId } = await users().createHumanUser({ userName: name, profile: { firstName: "Ada", lastName: "King" }, email: { email: `${name}@example.com` } });
    const events = await eventCount(userId);
    const result = await importOne(importedUser(name, { profile: { firstName: "Changed", lastName: "Name" } }), OnConflict.SKIP, "grpc-h2c");
    expect(result).toEqual({ index: 0, outcome: "skipped", userId });
    expect((await human(userId)).profile?.firstName).toBe("Ada");
    expect(await eventCount(userId)).toBe(events);
  });
});

describe("UPDATE", () => {
  it("brings profile, email, phone and hash up to date, once: the same users again change nothing and append no event", async () => {
    const name = fresh("updated");
    const original = importedUser(name, { phone: { phone: "+41 44 668 18 00" } }, `src-${name}`);
    const { userId } = await importOne(original, OnConflict.UPDATE);
    // bcrypt of another password.
    const newHash = "$2b$04$Ie2y6PSnAUxBWobJWvg4we4fjNZ8UZoT1963VWkyhwHh15cZAPoSO";
    const changed = importedUser(name, { profile: { firstName: "Augusta", lastName: "King", nickName: "Ada" }, email: { email: `${name}@new.example`, isEmailVerified: true }, hashedPassword: { value: newHash } }, `src-${name}`);
    const before = await eventCount(userId!);
    expect(await importOne(changed, OnConflict.UPDATE, "grpc-web-http1")).toEqual({ index: 0, outcome: "updated", userId });
    const after = await human(userId!);
    expect(after).toMatchObject({ profile: { firstName: "Augusta", lastName: "King", nickName: "Ada", displayName: "Augusta King" }, email: { email: `${name}@new.example`, isEmailVerified: true } });
    expect(after.phone).toBeUndefined();
    expect((await storedPassword(t, userId!)).hash).toBe(newHash);
    const events = await eventsOf(t, "user", userId!);
    expect(events.length).toBe(before + 1);
    // Only what changed, by name; of the password only what it is.
    expect(events.at(-1)).toMatchObject({
      type: "user.human.changed",
      payload: { via: "import", firstName: "Augusta", lastName: "King", nickName: "Ada", displayName: "Augusta King", email: `${name}@new.example`, phone: null, password: "imported:bcrypt" },
    });
    expect(Object.keys(events.at(-1)!.payload)).not.toContain("preferredLanguage");
    expect(JSON.stringify(events)).not.toContain(newHash);

    // The same user again, over other protocols: nothing changes, no event.
    for (const protocol of ["connect-json-http1", "grpc-h2c"] as const) {
      expect(await importOne(changed, OnConflict.UPDATE, protocol)).toEqual({ index: 0, outcome: "unchanged", userId });
    }
    expect(await eventCount(userId!)).toBe(before + 1);
  });

  it("treats the same plain password as no change (verified against the stored hash), another one as a new hash", async () => {
    const name = fresh("plain");
    const withPassword = (password: string) => importedUser(name, { hashedPassword: undefined, password });
    const { userId } = await importOne(withPassword("Sup3r-secret!"), OnConflict.UPDATE);
    const hash = (await storedPassword(t, userId!)).hash;
    expect(await importOne(withPassword("Sup3r-secret!"), OnConflict.UPDATE)).toMatchObject({ outcome: "unchanged" });
    expect((await storedPassword(t, userId!)).hash).toBe(hash);
    expect(await importOne(withPassword("An0ther-secret!"), OnConflict.UPDATE)).toMatchObject({ outcome: "updated" });
    expect((await storedPassword(t, userId!)).hash).not.toBe(hash);
    expect((await eventsOf(t, "user", userId!)).at(-1)?.payload).toEqual({ via: "import", password: "set" });
    // Without a password or hash the stored one stays.
    const kept = (await storedPassword(t, userId!)).hash;
    expect(await importOne(importedUser(name, { hashedPassword: undefined }), OnConflict.UPDATE)).toMatchObject({ outcome: "unchanged" });
    expect((await storedPassword(t, userId!)).hash).toBe(kept);
  });

  it("keeps a verified address verified, voids the code of an address that changes, and activates a user it completes", async () => {
    const name = fresh("verify");
    // Created by CreateHumanUser: unverified email, no password → INITIAL, with a mailed email code.
    const { userId } = await users().createHumanUser({ userName: name, profile: { firstName: "Imported", lastName: name }, email: { email: `${name}@example.com` } });
    const code = emailCodeIn((await lastMailTo(t.server, `${name}@example.com`))!)!;
    expect(await importOne(importedUser(name, { email: { email: `${name}@moved.example` } }), OnConflict.UPDATE)).toMatchObject({ outcome: "updated" });
    expect(await failure(users().verifyEmail({ userId, verificationCode: code }))).toMatchObject({ reason: "email_code.invalid" });
    expect((await human(userId)).state).toBe(UserState.INITIAL);
    // Now verified and with a hash: ACTIVE.
    expect(await importOne(importedUser(name, { email: { email: `${name}@moved.example`, isEmailVerified: true } }), OnConflict.UPDATE)).toMatchObject({ outcome: "updated" });
    expect(await human(userId)).toMatchObject({ state: UserState.ACTIVE, email: { isEmailVerified: true } });
    // A later file that does not say "verified" does not undo it.
    expect(await importOne(importedUser(name, { email: { email: `${name}@moved.example`, isEmailVerified: false } }), OnConflict.UPDATE)).toMatchObject({ outcome: "unchanged" });
    expect((await human(userId)).email?.isEmailVerified).toBe(true);
  });

  it("an address change voids the set-password link mailed to the old address, as SetEmail does", async () => {
    const name = fresh("invited");
    const { userId } = await users().createHumanUser({ userName: name, profile: { firstName: "Imported", lastName: name }, email: { email: `${name}@example.com` } });
    const initCode = new URL(/http\S+\/ui\/login\/user\/init\?\S+/.exec((await lastMailTo(t.server, `${name}@example.com`))!.text)![0]).searchParams.get("code")!;
    const moved = importedUser(name, { email: { email: `${name}@moved.example` } });
    delete (moved.user as { hashedPassword?: unknown }).hashedPassword;
    expect(await importOne(moved, OnConflict.UPDATE)).toMatchObject({ outcome: "updated" });
    const refused = await initializeUserWithCode(t.server.gatehouse.deps, { userId, code: initCode, password: "Fresh-Start-2026" }).then(() => undefined, (error: { reason?: string }) => error.reason);
    expect(refused).toBe("init_code.invalid");
  });

  it("finds a user by external id (an existing user without one gets it), and never renames one", async () => {
    const name = fresh("adopted");
    const { userId } = await users().createHumanUser({ userName: name, profile: { firstName: "Imported", lastName: name }, email: { email: `${name}@example.com`, isEmailVerified: true } });
    // By user name; the user had no external id: it gets this one.
    expect(await importOne(importedUser(name, {}, `src-${name}`), OnConflict.UPDATE)).toMatchObject({ outcome: "updated", userId });
    expect((await eventsOf(t, "user", userId)).at(-1)?.payload).toMatchObject({ externalId: `src-${name}` });
    // By external id: the same user, found by it.
    expect(await importOne(importedUser(name, { profile: { firstName: "Found", lastName: "By id" } }, `src-${name}`), OnConflict.UPDATE)).toMatchObject({ outcome: "updated", userId });
    // The external id's user under another user name: not renamed, under UPDATE and SKIP.
    for (const mode of [OnConflict.UPDATE, OnConflict.SKIP]) {
      expect(await importOne(importedUser(fresh("new-name"), {}, `src-${name}`), mode)).toMatchObject({ outcome: "failed", code: "failed_precondition", reason: "import.user_name_differs" });
    }
    // The answer names the user it found, by id and by user name, so the file can be put right.
    const [differs] = (await users().importHumanUsersBatch({ users: [importedUser(fresh("other-name"), {}, `src-${name}`)], onConflict: OnConflict.UPDATE })).results;
    expect(differs?.error?.errorInfo?.metadata).toEqual({ userId });
    expect(differs?.error?.message).toContain(`(${name})`);
    expect((await users().getUser({ userId })).user?.userName).toBe(name);
  });

  it("acts only on the importer's own users: another organization's, a machine user and one imported under another external id are conflicts", async () => {
    const foreign = fresh("foreign");
    await users("connect-json-http1", otherOrgId).createHumanUser({ userName: foreign, profile: { firstName: "F", lastName: "F" }, email: { email: `${foreign}@example.com` } });
    const machine = fresh("machine");
    await users().createMachineUser({ userName: machine, name: "Bot" });
    const other = fresh("other-id");
    await importOne(importedUser(other, {}, `src-a-${other}`), OnConflict.FAIL);
    for (const mode of [OnConflict.SKIP, OnConflict.UPDATE]) {
      const { results } = await users().importHumanUsersBatch({
        users: [importedUser(foreign), importedUser(machine), importedUser(other, {}, `src-b-${other}`), importedUser(fresh("fine"))],
        onConflict: mode,
      });
      expect(results.map(resultShape)).toMatchObject([
        { outcome: "failed", code: "already_exists", reason: "user.already_exists" },
        { outcome: "failed", code: "already_exists", reason: "user.already_exists" },
        { outcome: "failed", code: "already_exists", reason: "user.already_exists" },
        { outcome: "created" },
      ]);
    }
    // The foreign user is untouched.
    const listed = await users("connect-json-http1", otherOrgId).listUsers({ userName: foreign });
    expect(listed.users[0]?.type.case === "human" && listed.users[0].type.value.profile?.firstName).toBe("F");
  });

  it("never acts on another organization's user, even one imported there under the same user name and external id", async () => {
    const name = fresh("twin");
    const theirs = resultShape((await users("connect-json-http1", otherOrgId).importHumanUsersBatch({ users: [importedUser(name, {}, `src-${name}`)] })).results[0]!);
    expect(theirs.outcome).toBe("created");
    for (const mode of [OnConflict.SKIP, OnConflict.UPDATE]) {
      const ours = await importOne(importedUser(name, { profile: { firstName: "Not", lastName: "Theirs" } }, `src-${name}`), mode);
      expect(ours).toMatchObject({ outcome: "failed", code: "already_exists", reason: "user.already_exists" });
    }
    const { user } = await users("connect-json-http1", otherOrgId).getUser({ userId: theirs.userId! });
    expect(user?.type.case === "human" && user.type.value.profile?.firstName).not.toBe("Not");
  });

  it("answers a user named twice in one message with the conflict mode: the second meets the first", async () => {
    const name = fresh("double");
    const responses = await streamImport(users("grpc-h2c"), [
      { users: [importedUser(name), importedUser(name, { profile: { firstName: "Second", lastName: "Row" } })], onConflict: OnConflict.UPDATE },
      { users: [importedUser(name, {}, "")], onConflict: OnConflict.FAIL },
    ]);
    const results = responses.flatMap((r) => r.results.map(resultShape));
    expect(results).toMatchObject([{ outcome: "created" }, { outcome: "updated", userId: results[0]!.userId }, { outcome: "failed", reason: "user.already_exists" }]);
    expect((await human(results[0]!.userId!)).profile?.firstName).toBe("Second");
  });
});

describe("hashes the import keeps as given", () => {
  it("stores the same hash for a created user", async () => {
    const { userId } = await importOne(importedUser(fresh("hash")), OnConflict.FAIL);
    expect((await storedPassword(t, userId!)).hash).toBe(BCRYPT_HASH);
  });
});
