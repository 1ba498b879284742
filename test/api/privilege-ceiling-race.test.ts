import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { InstanceService } from "../../gen/gatehouse/admin/v1/instance_pb.js";
import { addOrganizationMember } from "../../src/commands/organization.js";
import { addPersonalAccessToken } from "../../src/commands/personal-access-token.js";
import type { Caller, Deps } from "../../src/context.js";
import { ownerCaller, withSlowReads } from "../support/slow-store.js";
import { useTestServer } from "../support/server.js";
import { createActor } from "../support/world.js";

/**
 * The privilege ceiling must hold when a token is issued WHILE the target is granted a role: with
 * reads that answer late (as on a networked backend) both calls read before either commits. The
 * token's commit checks that the memberships are still those it was checked against, the grant's
 * commit that no unconsidered token appeared: never a manager's token on an owner.
 */
const t = useTestServer();

describe("issuing a token while the user is granted a role", () => {
  it("never leaves a token a user manager issued on a user who became an organization owner", async () => {
    const { instanceId, defaultOrganizationId: orgId } = await t.clients.client(InstanceService, "connect-json-http1", { token: t.server.adminToken }).getInstance({});
    const manager = await createActor(t.clients, t.server.adminToken, orgId, "race-manager", ["ORG_USER_MANAGER"]);
    const deps: Deps = { ...t.server.gatehouse.deps, store: withSlowReads(t.server.gatehouse.deps.store) };
    const managerCaller: Caller = {
      principal: { userId: manager.userId, orgId, instanceId, tokenId: "race", memberships: [{ level: "org", scopeId: orgId, ownerOrgId: orgId, roles: ["ORG_USER_MANAGER"] }] },
      requestedOrgId: undefined,
    };
    const adminCaller: Caller = { ...ownerCaller("race-admin", orgId, instanceId), requestedOrgId: orgId };

    const outcomes: string[] = [];
    for (let round = 0; round < 6; round++) {
      const target = await createActor(t.clients, t.server.adminToken, orgId, `race-target-${round}`);
      const [issued, granted] = await Promise.allSettled([
        addPersonalAccessToken(deps, managerCaller, { userId: target.userId }),
        addOrganizationMember(deps, adminCaller, { userId: target.userId, roles: ["ORG_OWNER"] }),
      ]);
      outcomes.push(`${issued.status}/${granted.status}`);
      const db = new Database(`${t.server.dataDir}/gatehouse.db`, { readonly: true, fileMustExist: true });
      try {
        const owner = db.prepare("SELECT count(*) AS n FROM memberships, json_each(memberships.roles) WHERE user_id = ? AND json_each.value = 'ORG_OWNER'").get(target.userId) as { n: number };
        const managerTokens = db.prepare("SELECT count(*) AS n FROM personal_access_tokens WHERE user_id = ? AND issuer_user_id = ?").get(target.userId, manager.userId) as { n: number };
        expect(owner.n > 0 && managerTokens.n > 0, `round ${round}: ${outcomes.at(-1)}`).toBe(false);
      } finally {
        db.close();
      }
    }
    // The interleaving really happened: in some round both calls had read before either committed.
    expect(outcomes.some((outcome) => outcome.includes("rejected"))).toBe(true);
  });
});
