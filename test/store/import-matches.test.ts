import { beforeEach, describe, expect, it } from "vitest";
import type { RowWrite } from "../../src/store/commit.js";
import { storeEngines, useStore } from "./engines.js";
import { commitOf } from "./fixtures.js";

// What a bulk import (ImportHumanUsers) needs of every engine: one read that finds a whole chunk's existing users by
// user name key (instance-wide, as user names are unique per instance) or by external id (per organization), and an
// external id that is unique per organization only.

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
});
