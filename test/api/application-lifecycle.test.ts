import { createHash } from "node:crypto";
import { Code } from "@connectrpc/connect";
import Database from "better-sqlite3";
import { beforeAll, describe, expect, it } from "vitest";
import { ApiAuthMethod, ApplicationService, ApplicationState, OidcAppType, OidcAuthMethod } from "../../gen/gatehouse/admin/v1/application_pb.js";
import { EventService } from "../../gen/gatehouse/admin/v1/event_pb.js";
import { PROTOCOLS, type Protocol } from "../support/clients.js";
import { failure } from "../support/errors.js";
import { useTestServer } from "../support/server.js";
import { buildWorld, type World } from "../support/world.js";
import { lastSequence } from "../support/event-log.js";

/** DeactivateApplication, ReactivateApplication, RemoveApplication, RegenerateClientSecret (issue 16). */
const t = useTestServer();
let w: World;
let n = 0;

const apps = (protocol: Protocol = "connect-json-http1", token = t.server.adminToken) => t.clients.client(ApplicationService, protocol, { token, orgId: w.orgA });
const events = () => t.clients.client(EventService, "connect-json-http1", { token: t.server.adminToken });
const sha256 = (value: string) => createHash("sha256").update(value).digest("hex");
/** JSON text of anything, bigints included: for "this secret appears nowhere" assertions. */
const text = (value: unknown) => JSON.stringify(value, (_key, v: unknown) => (typeof v === "bigint" ? v.toString() : v));

beforeAll(async () => {
  w = await buildWorld(t.clients, t.server.adminToken, "app-life");
});

/** The application's row in the SQLite file, read directly. */
function rawApp(appId: string): { state: string; client_secret_hash: string | null; name: string } | undefined {
  const db = new Database(`${t.server.dataDir}/gatehouse.db`, { readonly: true, fileMustExist: true });
  try {
    return db.prepare("SELECT state, client_secret_hash, name FROM applications WHERE id = ?").get(appId) as ReturnType<typeof rawApp>;
  } finally {
    db.close();
  }
}

async function confidentialApp(name = `Confidential ${++n}`) {
  const created = await apps().createOidcApplication({ projectId: w.p1, name, redirectUris: ["https://app.example.com/cb"], authMethod: OidcAuthMethod.BASIC });
  return { ...created, name };
}

async function appendedSince(sequence: bigint) {
  return (await events().listEvents({ fromSequence: sequence + 1n, pageSize: 1000 })).events.filter((event) => event.actor !== "system");
}


describe.each(PROTOCOLS)("over %s", (protocol) => {
  it("deactivates and reactivates: the app stays readable with its state and settings, each change an event", async () => {
    const app = await confidentialApp();
    const before = (await apps(protocol).getApplication({ projectId: w.p1, appId: app.appId })).app!;
    expect(before.state).toBe(ApplicationState.ACTIVE);
    const since = await lastSequence(events());

    const deactivated = await apps(protocol).deactivateApplication({ projectId: w.p1, appId: app.appId });
    expect(deactivated.details?.resourceOwner).toBe(w.orgA);
    const inactive = (await apps(protocol).getApplication({ projectId: w.p1, appId: app.appId })).app!;
    expect(inactive.state).toBe(ApplicationState.INACTIVE);
    expect(inactive.config).toEqual(before.config);
    expect(inactive.details?.sequence).toBe(deactivated.details?.sequence);
    expect(rawApp(app.appId)).toMatchObject({ state: "inactive", client_secret_hash: sha256(app.clientSecret!) });

    const reactivated = await apps(protocol).reactivateApplication({ projectId: w.p1, appId: app.appId });
    expect((await apps(protocol).getApplication({ projectId: w.p1, appId: app.appId })).app).toMatchObject({ state: ApplicationState.ACTIVE, config: before.config });
    const appended = await appendedSince(since);
    expect(appended.map((event) => [event.eventType, event.aggregateId, event.sequence])).toEqual([
      ["application.deactivated", app.appId, deactivated.details!.sequence],
      ["application.reactivated", app.appId, reactivated.details!.sequence],
    ]);
  });

  it("refuses to deactivate an inactive app and to reactivate an active one, with stable reasons and no event", async () => {
    const app = await confidentialApp();
    const ids = { projectId: w.p1, appId: app.appId };
    expect(await failure(apps(protocol).reactivateApplication(ids))).toMatchObject({ code: Code.FailedPrecondition, reason: "application.not_inactive" });
    await apps(protocol).deactivateApplication(ids);
    const since = await lastSequence(events());
    expect(await failure(apps(protocol).deactivateApplication(ids))).toMatchObject({ code: Code.FailedPrecondition, reason: "application.already_inactive" });
    expect(await appendedSince(since)).toEqual([]);
  });

  it("removes an app for good: not readable, no row left, its name free again; removing again is not_found", async () => {
    const app = await confidentialApp();
    const ids = { projectId: w.p1, appId: app.appId };
    await apps(protocol).deactivateApplication(ids);
    const since = await lastSequence(events());
    const { details } = await apps(protocol).removeApplication(ids);
    expect(details?.resourceOwner).toBe(w.orgA);
    expect(rawApp(app.appId)).toBeUndefined();
    expect(await failure(apps(protocol).getApplication(ids))).toMatchObject({ code: Code.NotFound, reason: "application.not_found" });
    expect((await apps(protocol).listApplications({ projectId: w.p1 })).apps.map((a) => a.appId)).not.toContain(app.appId);
    const [removed] = await appendedSince(since);
    expect(removed).toMatchObject({ eventType: "application.removed", aggregateId: app.appId, sequence: details?.sequence });
    expect(text(removed)).not.toContain(sha256(app.clientSecret!));

    expect(await failure(apps(protocol).removeApplication(ids))).toMatchObject({ code: Code.NotFound, reason: "application.not_found" });
    expect(await failure(apps(protocol).removeApplication({ projectId: w.p1, appId: "no-such-app" }))).toMatchObject({ code: Code.NotFound, reason: "application.not_found" });
    // Names are unique per project case-insensitively: the removed one no longer holds its name.
    await apps(protocol).createApiApplication({ projectId: w.p1, name: app.name.toUpperCase() });
  });

  it("regenerates a client secret: returned once, stored hashed, the old one replaced at once, never in the event", async () => {
    const app = await confidentialApp();
    const since = await lastSequence(events());
    const { clientSecret, details } = await apps(protocol).regenerateClientSecret({ projectId: w.p1, appId: app.appId });
    expect(clientSecret).toMatch(/^[\w-]{43}$/);
    expect(clientSecret).not.toBe(app.clientSecret);
    expect(rawApp(app.appId)?.client_secret_hash).toBe(sha256(clientSecret));
    const appended = await appendedSince(since);
    expect(appended.map((event) => [event.eventType, event.sequence])).toEqual([["application.client_secret.regenerated", details!.sequence]]);
    expect(text(appended)).not.toContain(clientSecret);
    expect(text(appended)).not.toContain(sha256(clientSecret));
    expect(text(await apps(protocol).getApplication({ projectId: w.p1, appId: app.appId }))).not.toContain(clientSecret);
  });
});

describe("RegenerateClientSecret", () => {
  it.each([
    ["a public OIDC client (PKCE)", () => apps().createOidcApplication({ projectId: w.p1, name: `SPA ${++n}`, redirectUris: ["https://spa.example.com/"], appType: OidcAppType.USER_AGENT })],
    ["an OIDC client with private_key_jwt", () => apps().createOidcApplication({ projectId: w.p1, name: `JWT ${++n}`, redirectUris: ["https://jwt.example.com/"], authMethod: OidcAuthMethod.PRIVATE_KEY_JWT })],
    ["an API app with private_key_jwt", () => apps().createApiApplication({ projectId: w.p1, name: `API JWT ${++n}`, authMethod: ApiAuthMethod.PRIVATE_KEY_JWT })],
    [
      "a SAML app",
      () =>
        apps().createSamlApplication({ projectId: w.p1, name: `SAML ${++n}`, metadata: { case: "metadataUrl", value: "https://sp.example.com/metadata" } }),
    ],
  ])("is failed_precondition application.no_secret for %s, and stores no secret", async (_label, create) => {
    const { appId } = await create();
    expect(await failure(apps("grpc-h2c").regenerateClientSecret({ projectId: w.p1, appId }))).toMatchObject({
      code: Code.FailedPrecondition,
      reason: "application.no_secret",
    });
    expect(rawApp(appId)?.client_secret_hash).toBeNull();
  });

  it("works for an API app with BASIC and for an inactive app, so a leaked secret can be rotated while it is off", async () => {
    const api = await apps().createApiApplication({ projectId: w.p1, name: `API basic ${++n}`, authMethod: ApiAuthMethod.BASIC });
    await apps().deactivateApplication({ projectId: w.p1, appId: api.appId });
    const { clientSecret } = await apps("grpc-web-http1").regenerateClientSecret({ projectId: w.p1, appId: api.appId });
    expect(rawApp(api.appId)).toEqual({ state: "inactive", client_secret_hash: sha256(clientSecret), name: expect.any(String) });
  });
});

describe("who may change an application's lifecycle", () => {
  it("the PROJECT_OWNER of the project may; the owner of another project may not, and nothing changes", async () => {
    const app = await confidentialApp();
    const ids = { projectId: w.p1, appId: app.appId };
    const other = apps("connect-proto-h2c", w.actors.projectOwnerP2.token);
    for (const call of [() => other.deactivateApplication(ids), () => other.regenerateClientSecret(ids), () => other.removeApplication(ids)]) {
      expect(await failure(call())).toMatchObject({ code: Code.PermissionDenied });
    }
    expect(rawApp(app.appId)).toMatchObject({ state: "active", client_secret_hash: sha256(app.clientSecret!) });
    const owner = apps("connect-proto-h2c", w.actors.projectOwnerP1.token);
    await owner.deactivateApplication(ids);
    await owner.regenerateClientSecret(ids);
    await owner.removeApplication(ids);
    expect(rawApp(app.appId)).toBeUndefined();
  });

  it("answers strangers the same for an existing and an unknown app, and an app of another project is not_found", async () => {
    const app = await confidentialApp();
    const stranger = apps("grpc-h2c", w.actors.orgOwnerC.token);
    const existing = await failure(stranger.removeApplication({ projectId: w.p1, appId: app.appId }));
    expect(existing).toMatchObject({ code: Code.PermissionDenied });
    expect(await failure(stranger.removeApplication({ projectId: w.p1, appId: `${app.appId.slice(0, -4)}0000` }))).toEqual(existing);
    expect(await failure(apps().removeApplication({ projectId: w.p2, appId: app.appId }))).toMatchObject({ code: Code.NotFound, reason: "application.not_found" });
    expect(rawApp(app.appId)).toBeDefined();
  });
});
