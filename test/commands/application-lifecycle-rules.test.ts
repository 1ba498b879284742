import { createHash } from "node:crypto";
import { join } from "node:path";
import Database from "better-sqlite3";
import { beforeAll, describe, expect, it } from "vitest";
import { ApplicationService, ApplicationState, OidcAuthMethod } from "../../gen/gatehouse/admin/v1/application_pb.js";
import { OrganizationService } from "../../gen/gatehouse/admin/v1/organization_pb.js";
import { ProjectService } from "../../gen/gatehouse/admin/v1/project_pb.js";
import { changeApplicationState, regenerateClientSecret, removeApplication } from "../../src/commands/application-lifecycle.js";
import type { Caller } from "../../src/context.js";
import { useTestServer } from "../support/server.js";
import { adminCaller, busyDeps, eventTypesOf, race, racingDeps, typed } from "./rules-support.js";

/**
 * Application lifecycle calls that lose a race answer as the call after the winner would
 * (application.proto: already_inactive / not_found, and aborted for a secret replaced at the same
 * moment); a store failure that is no lost race reaches the caller as it is.
 */
const t = useTestServer();
let orgId: string;
let projectId: string;
let caller: Caller;
let appCount = 0;

beforeAll(async () => {
  ({ organizationId: orgId } = await t.clients.client(OrganizationService, "connect-json-http1", { token: t.server.adminToken }).createOrganization({ name: "App rules" }));
  ({ projectId } = await t.clients.client(ProjectService, "connect-json-http1", { token: t.server.adminToken, orgId }).createProject({ name: "Apps" }));
  caller = await adminCaller(t, orgId);
});

const apps = () => t.clients.client(ApplicationService, "connect-json-http1", { token: t.server.adminToken, orgId });

async function newApp(): Promise<string> {
  appCount += 1;
  const { appId } = await apps().createOidcApplication({ projectId, name: `App ${appCount}`, redirectUris: ["https://app.example.com/cb"], authMethod: OidcAuthMethod.BASIC });
  return appId;
}

function storedSecretHash(appId: string): string | null {
  const db = new Database(join(t.server.dataDir, "gatehouse.db"), { readonly: true, fileMustExist: true });
  try {
    return (db.prepare("select client_secret_hash as hash from applications where id = ?").get(appId) as { hash: string | null }).hash;
  } finally {
    db.close();
  }
}

describe("application changes that lose a race", () => {
  it("of two concurrent deactivations one wins; the other is application.already_inactive, and one event is appended", async () => {
    const appId = await newApp();
    const deps = racingDeps(t);
    const { succeeded, refusals } = await race([1, 2].map(() => changeApplicationState(deps, caller, { projectId, appId }, "deactivate")));
    expect(succeeded).toBe(1);
    expect(refusals.map(typed)).toEqual([{ kind: "failed_precondition", reason: "application.already_inactive", metadata: {} }]);
    expect((await apps().getApplication({ projectId, appId })).app?.state).toBe(ApplicationState.INACTIVE);
    expect(await eventTypesOf(t, "application", appId)).toEqual(["application.added", "application.deactivated"]);
  });

  it("a deactivation that loses to a removal is application.not_found naming the app, and appends nothing", async () => {
    const appId = await newApp();
    const deps = racingDeps(t);
    // Both take the same reads, so the call started first commits first: the removal.
    const [removal, deactivation] = await Promise.allSettled([removeApplication(deps, caller, { projectId, appId }), changeApplicationState(deps, caller, { projectId, appId }, "deactivate")]);
    expect(removal.status).toBe("fulfilled");
    expect(deactivation.status).toBe("rejected");
    expect(typed((deactivation as PromiseRejectedResult).reason)).toEqual({ kind: "not_found", reason: "application.not_found", metadata: { appId } });
    expect(await eventTypesOf(t, "application", appId)).toEqual(["application.added", "application.removed"]);
  });

  it("of two concurrent removals one wins; the other is application.not_found (removed already)", async () => {
    const appId = await newApp();
    const deps = racingDeps(t);
    const { succeeded, refusals } = await race([1, 2].map(() => removeApplication(deps, caller, { projectId, appId })));
    expect(succeeded).toBe(1);
    expect(refusals.map(typed)).toEqual([{ kind: "not_found", reason: "application.not_found", metadata: { appId } }]);
    expect(await eventTypesOf(t, "application", appId)).toEqual(["application.added", "application.removed"]);
  });

  it("of two concurrent secret regenerations one wins and its secret is the one stored; the other is aborted store.condition_failed", async () => {
    const appId = await newApp();
    const deps = racingDeps(t);
    const outcomes = await Promise.allSettled([1, 2].map(() => regenerateClientSecret(deps, caller, { projectId, appId })));
    const won = outcomes.flatMap((o) => (o.status === "fulfilled" ? [o.value] : []));
    const lost = outcomes.flatMap((o) => (o.status === "rejected" ? [o.reason] : []));
    expect(won).toHaveLength(1);
    expect(lost.map(typed)).toEqual([{ kind: "aborted", reason: "store.condition_failed", metadata: {} }]);
    expect(storedSecretHash(appId)).toBe(createHash("sha256").update(won[0]!.clientSecret).digest("hex"));
    expect(await eventTypesOf(t, "application", appId)).toEqual(["application.added", "application.client_secret.regenerated"]);
  });
});

describe("a store failure that is not a lost race", () => {
  it("reaches the caller as store.busy (retry), even when another writer removed the app meanwhile", async () => {
    const appId = await newApp();
    const deps = busyDeps(t, () => apps().removeApplication({ projectId, appId }));
    const error = await changeApplicationState(deps, caller, { projectId, appId }, "deactivate").catch((e: unknown) => e);
    expect(typed(error as never)).toEqual({ kind: "unavailable", reason: "store.busy", metadata: {} });
  });

  it("reaches the caller as store.busy when the app is unchanged", async () => {
    const appId = await newApp();
    const deps = busyDeps(t, async () => undefined);
    const error = await removeApplication(deps, caller, { projectId, appId }).catch((e: unknown) => e);
    expect(typed(error as never)).toEqual({ kind: "unavailable", reason: "store.busy", metadata: {} });
    expect((await apps().getApplication({ projectId, appId })).app?.state).toBe(ApplicationState.ACTIVE);
  });
});
