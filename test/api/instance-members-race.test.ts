import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { InstanceService } from "../../gen/gatehouse/admin/v1/instance_pb.js";
import { UserService } from "../../gen/gatehouse/admin/v1/user_pb.js";
import { removeInstanceMember } from "../../src/commands/instance.js";
import type { Deps } from "../../src/context.js";
import { DomainError } from "../../src/domain/errors.js";
import { ownerCaller, withSlowReads } from "../support/slow-store.js";
import { useTestServer } from "../support/server.js";
import { createActor } from "../support/world.js";

/**
 * Two IAM_OWNERs removing each other at the same time. The Store contract is async: on a networked
 * backend both removals read "two owners" before either commits. The real store of a running server is
 * wrapped so every read answers a little later (what a round trip does), which makes that interleaving
 * happen; the transaction itself must then refuse the second removal.
 */
const t = useTestServer();

describe("RemoveInstanceMember with interleaving requests", () => {
  it("of two owners removing each other concurrently, exactly one succeeds; the other is member.last_owner", async () => {
    const admin = t.clients.client(InstanceService, "connect-json-http1", { token: t.server.adminToken });
    const { instanceId, defaultOrganizationId: orgId } = await admin.getInstance({});
    const adminId = (await t.clients.client(UserService, "connect-json-http1", { token: t.server.adminToken }).listUsers({ userName: "admin" })).users[0]!.userId;
    const second = await createActor(t.clients, t.server.adminToken, orgId, "race-owner");
    await admin.addInstanceMember({ userId: second.userId, roles: ["IAM_OWNER"] });

    const deps: Deps = { ...t.server.gatehouse.deps, store: withSlowReads(t.server.gatehouse.deps.store) };
    const outcomes = await Promise.allSettled([
      removeInstanceMember(deps, ownerCaller(adminId, orgId, instanceId), { userId: second.userId }),
      removeInstanceMember(deps, ownerCaller(second.userId, orgId, instanceId), { userId: adminId }),
    ]);
    expect(outcomes.filter((outcome) => outcome.status === "fulfilled")).toHaveLength(1);
    const refused = outcomes.find((outcome) => outcome.status === "rejected")?.reason as unknown;
    expect(refused).toBeInstanceOf(DomainError);
    expect(refused).toMatchObject({ kind: "failed_precondition", reason: "member.last_owner" });

    const db = new Database(`${t.server.dataDir}/gatehouse.db`, { readonly: true, fileMustExist: true });
    try {
      const owners = db.prepare("SELECT count(*) AS n FROM memberships, json_each(memberships.roles) WHERE level = 'instance' AND json_each.value = 'IAM_OWNER'").get() as { n: number };
      expect(owners.n).toBe(1);
    } finally {
      db.close();
    }
  });
});

