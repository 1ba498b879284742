import { beforeEach, describe, expect, it } from "vitest";
import type { RowWrite } from "../../src/store/commit.js";
import { membershipFingerprint } from "../../src/store/fingerprints.js";
import { storeEngines, useStore } from "./engines.js";
import { commitOf } from "./fixtures.js";

// What a bulk import (ImportHumanUsers) needs of every engine: one read that finds a whole chunk's existing users by
// user name key (instance-wide, as user names are unique per instance) or by external id (per organization), an
// external id that is unique per organization only, and the re-import's update of an existing human user.

const org = (id: string): RowWrite => ({ kind: "organization.insert", row: { id, instanceId: "i1", name: id, nameKey: id, state: "active" } });
const human = (id: string, orgId: string, externalId: string | null = null): RowWrite => ({
  kind: "user.insert",
  row: { id, instanceId: "i1", orgId, type: "human", state: "active", userName: id, userNameKey: id, email: `${id}@example.com`, emailKey: `${id}@example.com`, emailVerified: true, externalId },
});

describe.each(storeEngines())("bulk import matching on $name", (engine) => {
  const { store } = useStore(engine);
  const commit = (...writes: RowWrite[]) => store().commit(commitOf(writes));
  const ids = async (filter: { userNameKeys: string[]; orgId: string; externalIds: string[] }) =>
    (await store().findUsersByNameKeysOrExternalIds({ instanceId: "i1", ...filter })).map((row) => row.id).sort();

  beforeEach(async () => {
    await commit({ kind: "instance.insert", row: { id: "i1", name: "I", defaultOrgId: "o1" } }, org("o1"), org("o2"));
    await commit(human("ada", "o1", "src-1"), human("grace", "o1", "src-2"), human("lin", "o2", "src-1"), human("kim", "o1"));
  });

  it("finds users by user name key in every organization, and by external id in the named organization only", async () => {
    expect(await ids({ userNameKeys: ["ada", "lin", "nobody"], orgId: "o1", externalIds: [] })).toEqual(["ada", "lin"]);
    expect(await ids({ userNameKeys: [], orgId: "o1", externalIds: ["src-1", "src-2", "src-9"] })).toEqual(["ada", "grace"]);
    expect(await ids({ userNameKeys: [], orgId: "o2", externalIds: ["src-1", "src-2"] })).toEqual(["lin"]);
    // Both at once, a user matched twice listed once.
    expect(await ids({ userNameKeys: ["ada", "kim"], orgId: "o1", externalIds: ["src-1"] })).toEqual(["ada", "kim"]);
    expect(await ids({ userNameKeys: [], orgId: "o1", externalIds: [] })).toEqual([]);
    const [row] = await store().findUsersByNameKeysOrExternalIds({ instanceId: "i1", userNameKeys: ["grace"], orgId: "o1", externalIds: [] });
    expect(row).toMatchObject({ id: "grace", externalId: "src-2", email: "grace@example.com" });
  });

  it("keeps an external id unique per organization (user.external_id.already_exists), several users may have none", async () => {
    await expect(commit(human("eve", "o1", "src-2"))).rejects.toMatchObject({ kind: "already_exists", reason: "user.external_id.already_exists" });
    await commit(human("bob", "o2", "src-2"), human("joe", "o1"));
    expect((await store().findUserById("joe"))?.externalId).toBeNull();
    expect((await store().findUserById("bob"))?.externalId).toBe("src-2");
  });

  const fields = {
    firstName: "Ada",
    lastName: "King",
    nickName: "",
    displayName: "Ada King",
    preferredLanguage: "en",
    gender: 1,
    email: "ada@new.example",
    emailKey: "ada@new.example",
    emailVerified: true,
    phone: null,
    phoneVerified: null,
  };

  it("a re-import sets the profile, email and phone, and the hash, external id and state only when told", async () => {
    await commit({ kind: "user.passwordFailed", id: "kim", attempts: 0, lock: false });
    await commit({ kind: "user.importUpdate", id: "kim", fields, passwordHash: "$2b$10$new", externalId: "src-9", activate: false });
    const kim = await store().findUserById("kim");
    expect(kim).toMatchObject({ ...fields, passwordHash: "$2b$10$new", failedPasswordAttempts: 0, externalId: "src-9", state: "active", userName: "kim" });
    await commit({ kind: "user.insert", row: { id: "eve", instanceId: "i1", orgId: "o1", type: "human", state: "initial", userName: "eve", userNameKey: "eve", passwordHash: "$2b$10$old", externalId: "e" } });
    await commit({ kind: "user.passwordFailed", id: "eve", attempts: 0, lock: false });
    await commit({ kind: "user.importUpdate", id: "eve", fields, activate: false });
    expect((await store().findUserById("eve"))?.state).toBe("initial");
    await commit({ kind: "user.importUpdate", id: "eve", fields: { ...fields, phone: "+41446681800", phoneVerified: false }, activate: true });
    expect(await store().findUserById("eve")).toMatchObject({ phone: "+41446681800", phoneVerified: false, passwordHash: "$2b$10$old", failedPasswordAttempts: 1, externalId: "e", state: "active" });
  });

  it("a re-import of a user that is gone, a machine user, or one whose roles changed since the ceiling was checked fails whole", async () => {
    await commit({ kind: "user.insert", row: { id: "bot", instanceId: "i1", orgId: "o1", type: "machine", state: "active", userName: "bot", userNameKey: "bot", machineName: "m", machineDescription: "" } });
    for (const id of ["nobody", "bot"]) {
      await expect(commit({ kind: "user.importUpdate", id, fields, activate: false })).rejects.toMatchObject({ kind: "aborted", reason: "store.condition_failed" });
    }
    const checked = membershipFingerprint([]);
    await commit({ kind: "membership.insert", row: { id: "m1", userId: "ada", level: "org", scopeId: "o1", ownerOrgId: "o1", projectId: null, roles: ["ORG_OWNER"] } });
    await expect(commit({ kind: "user.importUpdate", id: "ada", fields, activate: false, checkedMemberships: checked })).rejects.toMatchObject({ reason: "store.condition_failed" });
    expect((await store().findUserById("ada"))?.email).toBe("ada@example.com");
    const current = membershipFingerprint(await store().listMembershipsOfUser("ada"));
    await commit({ kind: "user.importUpdate", id: "ada", fields, activate: false, checkedMemberships: current });
    expect((await store().findUserById("ada"))?.email).toBe("ada@new.example");
  });
});
