import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createSqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import type { Store } from "../../src/store/store.js";
import type { Commit } from "../../src/store/commit.js";

/**
 * The store's last line against dangling references to a removed project or grant: memberships name
 * their scope without a foreign key, so a membership added after RemoveProject/RemoveProjectGrant read
 * the members (or committed) must be refused, and a removal must be refused while anything still names
 * the project or grant. Through the API the interleavings are rare; here each order is forced.
 */
let dir: string;
let store: Store;
const at = new Date("2026-01-01T00:00:00Z");
const commit = (writes: Commit["writes"]) => store.commit({ instanceId: "i1", actor: "tester", at, writes, events: [] });

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), "gatehouse-project-guards-"));
  store = createSqliteStore({ path: join(dir, "db.sqlite"), synchronous: "FULL", busyTimeoutMs: 1000 });
  await commit([
    { kind: "instance.insert", row: { id: "i1", name: "I", defaultOrgId: "o1" } },
    { kind: "organization.insert", row: { id: "o1", instanceId: "i1", name: "O", nameKey: "o", state: "active" } },
    { kind: "organization.insert", row: { id: "o2", instanceId: "i1", name: "O2", nameKey: "o2", state: "active" } },
    {
      kind: "user.insert",
      row: { id: "u1", instanceId: "i1", orgId: "o1", type: "machine", state: "active", userName: "m", userNameKey: "m", machineName: "m", machineDescription: "" },
    },
    { kind: "project.insert", row: { id: "p1", instanceId: "i1", orgId: "o1", name: "P", nameKey: "p", state: "active" } },
    { kind: "projectGrant.insert", row: { id: "g1", projectId: "p1", grantedOrgId: "o2", roleKeys: [] } },
  ]);
});

afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

const membership = (id: string, level: "project" | "project_grant", scopeId: string): Commit["writes"][number] => ({
  kind: "membership.insert",
  row: { id, userId: "u1", level, scopeId, ownerOrgId: "o1", projectId: "p1", roles: [] },
});

describe("project and grant removal against late additions", () => {
  it("refuses a project or grant membership whose scope is gone", async () => {
    await commit([{ kind: "projectGrant.delete", id: "g1" }]);
    await expect(commit([membership("m1", "project_grant", "g1")])).rejects.toMatchObject({ kind: "not_found", reason: "project.grant.not_found" });
    await commit([{ kind: "project.delete", id: "p1" }]);
    await expect(commit([membership("m2", "project", "p1")])).rejects.toMatchObject({ kind: "not_found", reason: "project.not_found" });
    expect(await store.listMembershipsOfUser("u1")).toEqual([]);
  });

  it("refuses to remove a project while a member, grant member, grant or role still names it", async () => {
    await commit([membership("m1", "project", "p1")]);
    await expect(commit([{ kind: "projectGrant.delete", id: "g1" }, { kind: "project.delete", id: "p1" }])).rejects.toMatchObject({ reason: "store.condition_failed" });
    await commit([{ kind: "membership.delete", id: "m1" }, membership("m2", "project_grant", "g1")]);
    await expect(commit([{ kind: "project.delete", id: "p1" }])).rejects.toMatchObject({ reason: "store.condition_failed" });
    // A grant keeps the project too, even with no member left; the rolled-back commits changed nothing.
    await commit([{ kind: "membership.delete", id: "m2" }]);
    await expect(commit([{ kind: "project.delete", id: "p1" }])).rejects.toMatchObject({ reason: "store.condition_failed" });
    await commit([{ kind: "projectRole.insert", row: { projectId: "p1", roleKey: "r", displayName: "R" } }, { kind: "projectGrant.delete", id: "g1" }]);
    await expect(commit([{ kind: "project.delete", id: "p1" }])).rejects.toMatchObject({ reason: "store.condition_failed" });
    await commit([{ kind: "projectRole.delete", projectId: "p1", roleKey: "r" }, { kind: "project.delete", id: "p1" }]);
    expect(await store.findProjectById("p1")).toBeUndefined();
    await expect(commit([{ kind: "project.delete", id: "p1" }])).rejects.toMatchObject({ reason: "store.condition_failed" });
  });

  it("refuses to remove a grant that still has a member", async () => {
    await commit([membership("m1", "project_grant", "g1")]);
    await expect(commit([{ kind: "projectGrant.delete", id: "g1" }])).rejects.toMatchObject({ reason: "store.condition_failed" });
    expect(await store.findProjectGrantById("g1")).toBeDefined();
    await commit([{ kind: "membership.delete", id: "m1" }, { kind: "projectGrant.delete", id: "g1" }]);
    expect(await store.findProjectGrantById("g1")).toBeUndefined();
  });
});
