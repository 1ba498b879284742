import { beforeAll, describe, expect, it } from "vitest";
import { OrganizationService } from "../../gen/gatehouse/admin/v1/organization_pb.js";
import { OnConflict, UserService, UserState } from "../../gen/gatehouse/admin/v1/user_pb.js";
import { initializeUserWithCode } from "../../src/commands/initialize-user.js";
import { type ImportedUserInit, importedUser, resultShape } from "../support/import.js";
import { eventsOf, storedPassword } from "../support/login-client.js";
import { emailCodeIn, lastMailTo } from "../support/outbox.js";
import { useTestServer } from "../support/server.js";

/**
 * ON_CONFLICT_UPDATE's rules for what a re-import keeps (user.proto, ImportHumanUsers "Conflicts"): a verified email or
 * phone stays verified only while its address is the same; a code stays valid unless what it was for changed (the
 * address it went to, or the password an init link would set); an INITIAL user becomes ACTIVE only once it has a
 * verified email AND a password; the event names exactly what changed, never a hash.
 */
const t = useTestServer();
let orgId: string;
beforeAll(async () => {
  ({ organizationId: orgId } = await t.clients.client(OrganizationService, "connect-json-http1", { token: t.server.adminToken }).createOrganization({ name: "Re-import rules" }));
});

const users = () => t.clients.client(UserService, "connect-json-http1", { token: t.server.adminToken, orgId });
let n = 0;
const fresh = (prefix: string) => `reimport-${prefix}-${++n}`;
const update = async (user: ImportedUserInit) => resultShape((await users().importHumanUsersBatch({ users: [user], onConflict: OnConflict.UPDATE })).results[0]!);
const human = async (userId: string) => {
  const { user } = await users().getUser({ userId });
  if (user?.type.case !== "human") throw new Error("not a human user");
  return { state: user.state, ...user.type.value };
};
const lastEventOf = async (userId: string) => (await eventsOf(t, "user", userId)).at(-1)!;
/** A user as a file without any credential describes it (no password, no hash). */
const withoutCredential = (user: ImportedUserInit): ImportedUserInit => {
  delete (user.user as { hashedPassword?: unknown }).hashedPassword;
  return user;
};

describe("UPDATE keeps a verification only for the same address", () => {
  it("a verified email moved to another address without is_email_verified is no longer verified", async () => {
    const name = fresh("email");
    const { userId } = await update(importedUser(name));
    expect((await human(userId!)).email?.isEmailVerified).toBe(true);
    expect(await update(importedUser(name, { email: { email: `${name}@elsewhere.example` } }))).toMatchObject({ outcome: "updated" });
    expect((await human(userId!)).email).toMatchObject({ email: `${name}@elsewhere.example`, isEmailVerified: false });
    // By name and new value; the address's lower-case key is storage, not news.
    expect((await lastEventOf(userId!)).payload).toEqual({ via: "import", email: `${name}@elsewhere.example`, emailVerified: false });
  });

  it("a verified phone stays verified when the file gives the same number unverified; another number is not verified; none removes it", async () => {
    const name = fresh("phone");
    const { userId } = await update(importedUser(name, { phone: { phone: "+41 44 668 18 00", isPhoneVerified: true } }));
    expect((await human(userId!)).phone).toMatchObject({ isPhoneVerified: true });

    expect(await update(importedUser(name, { phone: { phone: "+41 44 668 18 00" }, profile: { firstName: "Same", lastName: "Number" } }))).toMatchObject({ outcome: "updated" });
    expect((await human(userId!)).phone).toMatchObject({ isPhoneVerified: true });
    expect(Object.keys((await lastEventOf(userId!)).payload)).not.toContain("phoneVerified");

    expect(await update(importedUser(name, { phone: { phone: "+41 44 668 18 01" } }))).toMatchObject({ outcome: "updated" });
    expect((await human(userId!)).phone).toEqual(expect.objectContaining({ phone: "+41446681801", isPhoneVerified: false }));
    // The same number again, unverified: an unverified number does not become verified by being sent twice.
    expect(await update(importedUser(name, { phone: { phone: "+41 44 668 18 01" }, profile: { firstName: "Again", lastName: "Unverified" } }))).toMatchObject({ outcome: "updated" });
    expect((await human(userId!)).phone).toEqual(expect.objectContaining({ phone: "+41446681801", isPhoneVerified: false }));
    // A number the file marks verified is verified, new or not.
    expect(await update(importedUser(name, { phone: { phone: "+41 44 668 18 01", isPhoneVerified: true } }))).toMatchObject({ outcome: "updated" });
    expect((await human(userId!)).phone).toEqual(expect.objectContaining({ phone: "+41446681801", isPhoneVerified: true }));

    expect(await update(importedUser(name))).toMatchObject({ outcome: "updated" });
    expect((await human(userId!)).phone).toBeUndefined();
    expect((await lastEventOf(userId!)).payload).toEqual({ via: "import", phone: null, phoneVerified: null });
  });
});

describe("UPDATE voids a code only when what it was for changed", () => {
  it("a profile change keeps the pending email code valid; the event names the changed fields only", async () => {
    const name = fresh("email-code");
    const { userId } = await users().createHumanUser({ userName: name, profile: { firstName: "Before", lastName: name }, email: { email: `${name}@example.com` }, hashedPassword: { value: importedUser(name).user!.hashedPassword!.value! } });
    const code = emailCodeIn((await lastMailTo(t.server, `${name}@example.com`))!)!;
    const sameAddress = importedUser(name, { profile: { firstName: "After", lastName: name }, email: { email: `${name}@example.com` } });
    expect(await update(sameAddress)).toMatchObject({ outcome: "updated" });
    expect((await lastEventOf(userId)).payload).toEqual({ via: "import", firstName: "After", displayName: `After ${name}` });
    await users().verifyEmail({ userId, verificationCode: code });
    expect((await human(userId)).email?.isEmailVerified).toBe(true);
  });

  it("a profile change keeps the set-password link valid (no password given, the address the same)", async () => {
    const name = fresh("init-code");
    const { userId } = await users().createHumanUser({ userName: name, profile: { firstName: "Before", lastName: name }, email: { email: `${name}@example.com` } });
    const initCode = new URL(/http\S+\/ui\/login\/user\/init\?\S+/.exec((await lastMailTo(t.server, `${name}@example.com`))!.text)![0]).searchParams.get("code")!;
    expect(await update(withoutCredential(importedUser(name, { profile: { firstName: "After", lastName: name }, email: { email: `${name}@example.com` } })))).toMatchObject({ outcome: "updated" });
    await initializeUserWithCode(t.server.gatehouse.deps, { userId, code: initCode, password: "Fresh-Start-2026" });
    expect((await storedPassword(t, userId)).hash).toMatch(/^\$argon2id\$/);
  });
});

describe("UPDATE activates an INITIAL user only once it is complete", () => {
  it("a verified email without any password leaves it INITIAL; then a plain password (it had none) makes it ACTIVE, and the event says so", async () => {
    const name = fresh("initial");
    const { userId } = await users().createHumanUser({ userName: name, profile: { firstName: "Imported", lastName: name }, email: { email: `${name}@example.com` } });
    expect(await update(withoutCredential(importedUser(name)))).toMatchObject({ outcome: "updated" });
    expect(await human(userId)).toMatchObject({ state: UserState.INITIAL, email: { isEmailVerified: true } });
    expect((await lastEventOf(userId)).payload).toEqual({ via: "import", emailVerified: true });

    expect(await update(importedUser(name, { hashedPassword: undefined, password: "First-Password-1!" }))).toMatchObject({ outcome: "updated" });
    expect((await human(userId)).state).toBe(UserState.ACTIVE);
    expect((await lastEventOf(userId)).payload).toEqual({ via: "import", password: "set", state: "active" });
  });
});
