import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createSqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import type { Commit, Store } from "../../src/store/store.js";
import { commitOf, machineUser } from "./fixtures.js";

// Store.countRoleHolders (src/store/store.ts): how many members of one scope hold a role, leaving out one
// membership — what RemoveMember and RemoveUser ask before they take away the last owner of a scope.

let dir: string;
let store: Store;

type Write = Commit["writes"][number];
const commit = (...writes: Write[]) => store.commit(commitOf(writes));
const user = machineUser;
const orgMember = (id: string, userId: string, orgId: string, roles: string[]): Write => ({
  kind: "membership.insert",
  row: { id, userId, level: "org", scopeId: orgId, ownerOrgId: orgId, projectId: null, roles },
});

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), "gatehouse-store-survivors-"));
  store = createSqliteStore({ path: join(dir, "db.sqlite"), synchronous: "NORMAL", busyTimeoutMs: 1000 });
  await commit(
    { kind: "instance.insert", row: { id: "i1", name: "I", defaultOrgId: "o1" } },
    { kind: "organization.insert", row: { id: "o1", instanceId: "i1", name: "O", nameKey: "o", state: "active" } },
    { kind: "organization.insert", row: { id: "o2", instanceId: "i1", name: "O2", nameKey: "o2", state: "active" } },
  );
});

afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("counting the holders of a role in a scope", () => {
  it("counts the scope's other members that hold the role, and no one else", async () => {
    await commit(user("a"), user("b"), user("c"), user("d"));
    await commit(
      orgMember("ma", "a", "o1", ["ORG_OWNER"]),
      orgMember("mb", "b", "o1", ["ORG_USER_MANAGER", "ORG_OWNER"]),
      orgMember("mc", "c", "o1", ["ORG_USER_MANAGER"]),
      // Another scope's owner is no holder here.
      orgMember("md", "d", "o2", ["ORG_OWNER"]),
    );
    expect(await store.countRoleHolders("org", "o1", "ORG_OWNER", "ma")).toBe(1);
    expect(await store.countRoleHolders("org", "o1", "ORG_OWNER", "none")).toBe(2);
    expect(await store.countRoleHolders("org", "o1", "ORG_USER_MANAGER", "mb")).toBe(1);
    expect(await store.countRoleHolders("org", "o2", "ORG_OWNER", "md")).toBe(0);
    expect(await store.countRoleHolders("project", "o1", "ORG_OWNER", "none")).toBe(0);
  });
});
