import { Code } from "@connectrpc/connect";
import Database from "better-sqlite3";
import { beforeAll, describe, expect, it } from "vitest";
import { EventService } from "../../gen/gatehouse/admin/v1/event_pb.js";
import { IdentityProviderService } from "../../gen/gatehouse/admin/v1/identity_provider_pb.js";
import { UserService } from "../../gen/gatehouse/admin/v1/user_pb.js";
import { PROTOCOLS, type Protocol } from "../support/clients.js";
import { failure } from "../support/errors.js";
import { useTestServer } from "../support/server.js";
import { buildWorld, createActor, type World } from "../support/world.js";
import { lastSequence } from "../support/event-log.js";

/** RemoveIdentityProvider (issue 16): users' links go with the IDP, in one transaction, each an event. */
const t = useTestServer();
let w: World;
let n = 0;

const as = <S extends Parameters<typeof t.clients.client>[0]>(service: S, orgId: string, protocol: Protocol = "connect-json-http1", token = t.server.adminToken) =>
  t.clients.client(service, protocol, { token, orgId });
const events = () => t.clients.client(EventService, "connect-json-http1", { token: t.server.adminToken });
const appendedSince = async (sequence: bigint) =>
  (await events().listEvents({ fromSequence: sequence + 1n, pageSize: 1000 })).events.filter((event) => event.actor !== "system");

beforeAll(async () => {
  w = await buildWorld(t.clients, t.server.adminToken, "idp-life");
});

/** How many rows of the SQLite file name the IDP: the provider itself and users' links to it. */
function rawReferences(idpId: string): { providers: number; links: number } {
  const db = new Database(`${t.server.dataDir}/gatehouse.db`, { readonly: true, fileMustExist: true });
  try {
    const count = (sql: string) => (db.prepare(sql).get(idpId) as { n: number }).n;
    return { providers: count("SELECT count(*) AS n FROM identity_providers WHERE id = ?"), links: count("SELECT count(*) AS n FROM user_idp_links WHERE idp_id = ?") };
  } finally {
    db.close();
  }
}

async function createIdp(orgId: string, instanceLevel = false) {
  const name = `SSO ${++n}`;
  const { idpId } = await as(IdentityProviderService, orgId).createIdentityProvider({ name, issuer: "https://sso.example.com", clientId: "gh", clientSecret: "idp-secret", instanceLevel });
  return { idpId, name };
}

/** A human of `orgId` linked to the IDP. */
async function linkedUser(orgId: string, idpId: string) {
  const userName = `linked-${++n}`;
  const { userId } = await as(UserService, orgId).createHumanUser({
    userName,
    profile: { firstName: "Lin", lastName: "Ked" },
    email: { email: `${userName}@example.com`, isEmailVerified: true },
    idps: [{ configId: idpId, externalUserId: `ext-${userName}` }],
  });
  return userId;
}

/** The IDPs a user links to, as GetUser shows them. */
async function linksOf(userId: string, protocol: Protocol) {
  const { user } = await as(UserService, w.orgA, protocol).getUser({ userId });
  if (user?.type.case !== "human") throw new Error("expected a human user");
  return user.type.value.idpLinks.map((link) => link.configId);
}

describe.each(PROTOCOLS)("RemoveIdentityProvider over %s", (protocol) => {
  it("removes an organization's IDP with every user's link to it, leaving no reference (API and raw database)", async () => {
    const idp = await createIdp(w.orgA);
    const users = [await linkedUser(w.orgA, idp.idpId), await linkedUser(w.orgA, idp.idpId)];
    expect(rawReferences(idp.idpId)).toEqual({ providers: 1, links: 2 });
    expect(await linksOf(users[0]!, protocol)).toEqual([idp.idpId]);
    const since = await lastSequence(events());

    const { details } = await as(IdentityProviderService, w.orgA, protocol).removeIdentityProvider({ idpId: idp.idpId });
    expect(details?.resourceOwner).toBe(w.orgA);

    expect(rawReferences(idp.idpId)).toEqual({ providers: 0, links: 0 });
    expect(await failure(as(IdentityProviderService, w.orgA, protocol).getIdentityProvider({ idpId: idp.idpId }))).toMatchObject({ code: Code.NotFound, reason: "idp.not_found" });
    for (const userId of users) expect(await linksOf(userId, protocol)).toEqual([]);
    const appended = await appendedSince(since);
    expect(appended.map((event) => [event.eventType, event.aggregateType, event.aggregateId, event.resourceOwner])).toEqual([
      ["user.idp_link.removed", "user", users[0], w.orgA],
      ["user.idp_link.removed", "user", users[1], w.orgA],
      ["idp.removed", "idp", idp.idpId, w.orgA],
    ]);
    expect(appended.at(-1)?.sequence).toBe(details?.sequence);
    // The name is free again in the organization.
    await as(IdentityProviderService, w.orgA, protocol).createIdentityProvider({ name: idp.name.toLowerCase(), issuer: "https://sso.example.com", clientId: "gh", clientSecret: "x" });
  });

  it("is not_found for an IDP removed already, an unknown id and another organization's IDP", async () => {
    const idp = await createIdp(w.orgA);
    const idps = as(IdentityProviderService, w.orgA, protocol);
    await idps.removeIdentityProvider({ idpId: idp.idpId });
    const notFound = { code: Code.NotFound, reason: "idp.not_found" };
    expect(await failure(idps.removeIdentityProvider({ idpId: idp.idpId }))).toMatchObject(notFound);
    expect(await failure(idps.removeIdentityProvider({ idpId: "no-such-idp" }))).toMatchObject(notFound);
    const ofB = await createIdp(w.orgB);
    expect(await failure(idps.removeIdentityProvider({ idpId: ofB.idpId }))).toMatchObject(notFound);
    expect(rawReferences(ofB.idpId).providers).toBe(1);
  });
});

describe("instance-level identity providers", () => {
  it("need iam.write (to an organization owner one is not_found); the instance owner removes it with links of every organization", async () => {
    const idp = await createIdp(w.orgA, true);
    const userA = await linkedUser(w.orgA, idp.idpId);
    const userB = await linkedUser(w.orgB, idp.idpId);
    expect(await failure(as(IdentityProviderService, w.orgA, "grpc-h2c", w.actors.orgOwnerA.token).removeIdentityProvider({ idpId: idp.idpId }))).toMatchObject({
      code: Code.NotFound,
      reason: "idp.not_found",
    });
    expect(rawReferences(idp.idpId)).toEqual({ providers: 1, links: 2 });

    const since = await lastSequence(events());
    const { details } = await as(IdentityProviderService, w.orgB, "grpc-web-http1").removeIdentityProvider({ idpId: idp.idpId });
    expect(rawReferences(idp.idpId)).toEqual({ providers: 0, links: 0 });
    // Each link's event belongs to its user's organization; the IDP's to the instance.
    const appended = await appendedSince(since);
    expect(appended.map((event) => [event.eventType, event.aggregateId, event.resourceOwner])).toEqual([
      ["user.idp_link.removed", userA, w.orgA],
      ["user.idp_link.removed", userB, w.orgB],
      ["idp.removed", idp.idpId, details?.resourceOwner],
    ]);
    expect([w.orgA, w.orgB]).not.toContain(details?.resourceOwner);
  });
});

describe("who may remove an identity provider", () => {
  it("an ORG_SETTINGS_MANAGER may; a user without roles may not, and strangers learn nothing about existence", async () => {
    const idp = await createIdp(w.orgA);
    await linkedUser(w.orgA, idp.idpId);
    const nobody = as(IdentityProviderService, w.orgA, "connect-proto-h2c", w.actors.nobody.token);
    expect(await failure(nobody.removeIdentityProvider({ idpId: idp.idpId }))).toMatchObject({ code: Code.PermissionDenied });
    const stranger = as(IdentityProviderService, w.orgA, "connect-proto-h2c", w.actors.orgOwnerC.token);
    const existing = await failure(stranger.removeIdentityProvider({ idpId: idp.idpId }));
    expect(existing).toMatchObject({ code: Code.PermissionDenied });
    expect(await failure(stranger.removeIdentityProvider({ idpId: `${idp.idpId.slice(0, -4)}0000` }))).toEqual(existing);
    expect(rawReferences(idp.idpId)).toEqual({ providers: 1, links: 1 });

    const manager = await createActor(t.clients, t.server.adminToken, w.orgA, `idp-settings-${++n}`, ["ORG_SETTINGS_MANAGER"]);
    await as(IdentityProviderService, w.orgA, "connect-proto-h2c", manager.token).removeIdentityProvider({ idpId: idp.idpId });
    expect(rawReferences(idp.idpId)).toEqual({ providers: 0, links: 0 });
  });

  it("a new user cannot link to a removed IDP", async () => {
    const idp = await createIdp(w.orgA);
    await as(IdentityProviderService, w.orgA).removeIdentityProvider({ idpId: idp.idpId });
    expect(await failure(linkedUser(w.orgA, idp.idpId))).toMatchObject({ code: Code.FailedPrecondition, reason: "idp.not_found" });
    expect(rawReferences(idp.idpId)).toEqual({ providers: 0, links: 0 });
  });
});

describe.each(PROTOCOLS)("ListIdentityProviders over %s", (protocol) => {
  it("walks the organization's and the instance's IDPs in creation order, page by page, with the total", async () => {
    const all = await as(IdentityProviderService, w.orgC, protocol).listIdentityProviders({});
    const mine = [await createIdp(w.orgC), await createIdp(w.orgC), await createIdp(w.orgC)].map((idp) => idp.idpId);
    const expected = [...all.idps.map((idp) => idp.idpId), ...mine];
    const seen: string[] = [];
    let pageToken = "";
    let pages = 0;
    do {
      const page = await as(IdentityProviderService, w.orgC, protocol).listIdentityProviders({ pageSize: 2, pageToken });
      expect(page.idps.length).toBeLessThanOrEqual(2);
      expect(page.details?.totalResult).toBe(BigInt(expected.length));
      seen.push(...page.idps.map((idp) => idp.idpId));
      pageToken = page.details!.nextPageToken;
      pages++;
    } while (pageToken && pages < 50);
    expect(seen).toEqual(expected);
    expect(pages).toBe(Math.ceil(expected.length / 2));
    expect(await failure(as(IdentityProviderService, w.orgC, protocol).listIdentityProviders({ pageToken: "bogus" }))).toMatchObject({
      code: Code.InvalidArgument,
      reason: "page_token.invalid",
    });
  });
});
