import { describe, expect, it } from "vitest";
import { InstanceService } from "../../gen/gatehouse/admin/v1/instance_pb.js";
import { UserService } from "../../gen/gatehouse/admin/v1/user_pb.js";
import { removeUser } from "../../src/commands/user-lifecycle.js";
import type { Caller, Deps } from "../../src/context.js";
import { ownerCaller, withSlowReads } from "../support/slow-store.js";
import { useTestServer } from "../support/server.js";
import { createActor } from "../support/world.js";

/** RemoveUser keeps an IAM_OWNER even when the last two remove each other at the same moment. */
const t = useTestServer();

describe("RemoveUser with interleaving requests", () => {
  it("of two instance owners removing each other's user concurrently, exactly one succeeds; the other is member.last_owner", async () => {
    const admin = t.clients.client(InstanceService, "connect-json-http1", { token: t.server.adminToken });
    const { instanceId, defaultOrganizationId: orgId } = await admin.getInstance({});
    const first = await createActor(t.clients, t.server.adminToken, orgId, "race-remove-a");
    const second = await createActor(t.clients, t.server.adminToken, orgId, "race-remove-b");
    await admin.addInstanceMember({ userId: first.userId, roles: ["IAM_OWNER"] });
    await admin.addInstanceMember({ userId: second.userId, roles: ["IAM_OWNER"] });
    // Only these two hold IAM_OWNER from now on: the bootstrap admin's instance role goes.
    const adminId = (await t.clients.client(UserService, "connect-json-http1", { token: t.server.adminToken }).listUsers({ userName: "admin" })).users[0]!.userId;
    await t.clients.client(InstanceService, "connect-json-http1", { token: first.token }).removeInstanceMember({ userId: adminId });

    const deps: Deps = { ...t.server.gatehouse.deps, store: withSlowReads(t.server.gatehouse.deps.store) };
    const asOwner = (userId: string): Caller => ({ ...ownerCaller(userId, orgId, instanceId), requestedOrgId: orgId });
    const outcomes = await Promise.allSettled([removeUser(deps, asOwner(first.userId), second.userId), removeUser(deps, asOwner(second.userId), first.userId)]);
    expect(outcomes.filter((outcome) => outcome.status === "fulfilled")).toHaveLength(1);
    expect(outcomes.find((outcome) => outcome.status === "rejected")?.reason).toMatchObject({ kind: "failed_precondition", reason: "member.last_owner", metadata: { role: "IAM_OWNER" } });
  });
});
