import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { InstanceService } from "../../gen/gatehouse/admin/v1/instance_pb.js";
import { addOrganizationMember } from "../../src/commands/organization.js";
import { addPersonalAccessToken } from "../../src/commands/personal-access-token.js";
import type { Caller, Deps } from "../../src/context.js";
import type { Store } from "../../src/store/store.js";
import { ownerCaller } from "../support/slow-store.js";
import { useTestServer } from "../support/server.js";
import { createActor } from "../support/world.js";

/**
 * The token side of the privilege ceiling's race guard, on its own: a role granted after the ceiling read the
 * target's memberships but before the token is written must stop the token (the commit is conditional on the
 * memberships the ceiling judged). The grant side has its own guard; test/api/privilege-ceiling-race.test.ts
 * shows the two together under random interleavings, this one pins the order where only the token guard helps.
 */
const t = useTestServer();

/** The real store, whose read of `userId`'s memberships answers only once `release` is called. */
function holdingMembershipRead(store: Store, userId: string) {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let reached!: () => void;
  const readDone = new Promise<void>((resolve) => (reached = resolve));
  const held: Store = new Proxy(store, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver) as unknown;
      if (property !== "listMembershipsOfUser" || typeof value !== "function") return value;
      return async (id: string) => {
        const result = await (value as (id: string) => Promise<unknown>).call(target, id);
        if (id === userId) {
          reached();
          await released;
        }
        return result;
      };
    },
  });
  return { store: held, readDone, release };
}

describe("a token issued while its user is granted a role", () => {
  it("is refused (aborted, store.condition_failed) when the grant commits between the ceiling's read and the token's write", async () => {
    const { instanceId, defaultOrganizationId: orgId } = await t.clients.client(InstanceService, "connect-json-http1", { token: t.server.adminToken }).getInstance({});
    const manager = await createActor(t.clients, t.server.adminToken, orgId, "guard-manager", ["ORG_USER_MANAGER"]);
    const target = await createActor(t.clients, t.server.adminToken, orgId, "guard-target");
    const managerCaller: Caller = {
      principal: { userId: manager.userId, orgId, instanceId, tokenId: "guard", memberships: [{ level: "org", scopeId: orgId, ownerOrgId: orgId, roles: ["ORG_USER_MANAGER"] }] },
      requestedOrgId: undefined,
    };
    const held = holdingMembershipRead(t.server.gatehouse.deps.store, target.userId);
    const tokenDeps: Deps = { ...t.server.gatehouse.deps, store: held.store };

    const issuing = addPersonalAccessToken(tokenDeps, managerCaller, { userId: target.userId }).then(
      () => "issued",
      (error: unknown) => error,
    );
    await held.readDone; // the ceiling has read the target's memberships: none, so it passes
    await addOrganizationMember(t.server.gatehouse.deps, { ...ownerCaller("guard-admin", orgId, instanceId), requestedOrgId: orgId }, { userId: target.userId, roles: ["ORG_OWNER"] });
    held.release();

    const outcome = await issuing;
    expect(outcome).toMatchObject({ kind: "aborted", reason: "store.condition_failed" });
    const db = new Database(`${t.server.dataDir}/gatehouse.db`, { readonly: true, fileMustExist: true });
    try {
      const managerTokens = db.prepare("SELECT count(*) FROM personal_access_tokens WHERE user_id = ? AND issuer_user_id = ?").pluck().get(target.userId, manager.userId);
      expect(managerTokens).toBe(0);
    } finally {
      db.close();
    }
  });
});
