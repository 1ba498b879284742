import { Code, ConnectError } from "@connectrpc/connect";
import { beforeAll, describe, expect, it } from "vitest";
import { EventService } from "../../gen/gatehouse/admin/v1/event_pb.js";
import { IdentityProviderService, StylingType } from "../../gen/gatehouse/admin/v1/identity_provider_pb.js";
import { OrganizationService } from "../../gen/gatehouse/admin/v1/organization_pb.js";
import { idpSecretContext } from "../../src/commands/identity-provider.js";
import { openSecret } from "../../src/support/secret-box.js";
import { PROTOCOLS, type Protocol } from "../support/clients.js";
import { failure } from "../support/errors.js";
import { useTestServer } from "../support/server.js";
import { masterKeyOf, storedRow } from "../support/stored-rows.js";
import { createActor } from "../support/world.js";

const t = useTestServer();
let otherOrgId: string;
const SECRET = "client-secret-that-must-never-leak";

beforeAll(async () => {
  ({ organizationId: otherOrgId } = await t.clients.client(OrganizationService, "connect-json-http1", { token: t.server.adminToken }).createOrganization({ name: "Other IDP org" }));
});

const idps = (protocol: Protocol = "connect-json-http1", orgId?: string) =>
  t.clients.client(IdentityProviderService, protocol, { token: t.server.adminToken, ...(orgId ? { orgId } : {}) });
const create = (name: string, extra: { stylingType?: StylingType; autoRegister?: boolean; instanceLevel?: boolean } = {}, orgId?: string) =>
  idps("connect-json-http1", orgId).createIdentityProvider({ name, issuer: "https://login.example.com", clientId: "gh", clientSecret: SECRET, ...extra });
/** gatehouse_deprecated_calls_total of UpdateIdentityProvider, as /metrics reports it now. */
const deprecatedCalls = async () => {
  const metrics = await (await fetch(`${t.server.url}/metrics`)).text();
  return Number(/^gatehouse_deprecated_calls_total\{procedure="\/gatehouse\.admin\.v1\.IdentityProviderService\/UpdateIdentityProvider"\} (\d+)$/m.exec(metrics)?.[1] ?? 0);
};
const eventCount = async () => (await t.clients.client(EventService, "connect-json-http1", { token: t.server.adminToken }).listEvents({})).details!.totalResult;

describe("creating and reading identity providers", () => {
  it("lists the organization's and the instance's providers, never with a secret", async () => {
    const { idpId } = await create("Org SSO", { stylingType: StylingType.VENDOR, autoRegister: true });
    const { idpId: instanceIdp } = await create("Instance SSO", { instanceLevel: true });
    const { idps: listed } = await idps().listIdentityProviders({});
    expect(listed.map((i) => i.idpId)).toEqual(expect.arrayContaining([idpId, instanceIdp]));
    expect(listed.find((i) => i.idpId === instanceIdp)?.instanceLevel).toBe(true);
    const { idp } = await idps().getIdentityProvider({ idpId });
    expect(idp).toMatchObject({ name: "Org SSO", stylingType: StylingType.VENDOR, autoRegister: true, scopes: ["openid", "profile", "email"] });
    const { events } = await t.clients.client(EventService, "connect-json-http1", { token: t.server.adminToken }).listEvents({ aggregateId: idpId });
    const everything = JSON.stringify({ listed, idp, events }, (_k, v: unknown) => (typeof v === "bigint" ? String(v) : v));
    expect(everything).not.toContain(SECRET);
    expect(t.server.logs.text).not.toContain(SECRET);
  });

  it("stores the client secret sealed with the master key, bound to its provider", async () => {
    const { idpId } = await create("Sealed SSO");
    const row = await storedRow<{ sealed: string }>(t.server, "select client_secret_sealed as sealed from identity_providers where id = ?", idpId);
    expect(row.sealed).toMatch(/^v1\./);
    expect(row.sealed).not.toContain(SECRET);
    const key = masterKeyOf(t.server);
    expect(openSecret(key, row.sealed, idpSecretContext(idpId))).toBe(SECRET);
    expect(() => openSecret(key, row.sealed, idpSecretContext("another-idp"))).toThrow();
  });

  it("needs iam.write for an instance-level provider", async () => {
    const owner = await createActor(t.clients, t.server.adminToken, otherOrgId, "idp-org-owner", ["ORG_OWNER"]);
    const asOwner = t.clients.client(IdentityProviderService, "connect-json-http1", { token: owner.token });
    await asOwner.createIdentityProvider({ name: "Owner's own", issuer: "https://a.example.com", clientId: "c", clientSecret: "s" });
    const error = await failure(asOwner.createIdentityProvider({ name: "Instance wide", issuer: "https://a.example.com", clientId: "c", clientSecret: "s", instanceLevel: true }));
    expect(error).toMatchObject({ code: Code.PermissionDenied, metadata: { permission: "iam.write" } });
  });

  it("rejects an issuer that is not https", async () => {
    const error = await failure(idps().createIdentityProvider({ name: "Plain", issuer: "http://login.example.com", clientId: "c", clientSecret: "s" }));
    expect(error).toMatchObject({ code: Code.InvalidArgument, reason: "idp.issuer_invalid", fields: ["issuer"] });
  });
});

describe.each(PROTOCOLS)("UpdateIdentityProvider (SPEC 4.3, deprecated) over %s", (protocol) => {
  it("replaces every field: sending only the name resets styling type and auto-register", async () => {
    const { idpId } = await create(`Full ${protocol}`, { stylingType: StylingType.VENDOR, autoRegister: true });
    const { details } = await idps(protocol).updateIdentityProvider({ idpId, name: `Only name ${protocol}` });
    const { idp } = await idps(protocol).getIdentityProvider({ idpId });
    expect(idp).toMatchObject({ name: `Only name ${protocol}`, stylingType: StylingType.UNSPECIFIED, autoRegister: false, issuer: "https://login.example.com" });
    expect(details).toMatchObject({ resourceOwner: idp!.details!.resourceOwner, sequence: idp!.details!.sequence });
    const { events } = await t.clients.client(EventService, protocol, { token: t.server.adminToken }).listEvents({ aggregateId: idpId });
    expect(events.map((e) => e.eventType)).toEqual(["idp.added", "idp.changed"]);
  });

  it("carries a Deprecation header on success and on error, and counts the calls", async () => {
    const { idpId } = await create(`Header ${protocol}`);
    const countedBefore = await deprecatedCalls();
    const headers: (string | null)[] = [];
    await idps(protocol).updateIdentityProvider({ idpId, name: `Header2 ${protocol}` }, { onHeader: (h) => headers.push(h.get("deprecation")) });
    expect(headers).toEqual(["@1767225600"]);
    const refused = await idps(protocol).updateIdentityProvider({ idpId: "no-such-idp", name: "x" }).then(
      () => undefined,
      (error: unknown) => ConnectError.from(error),
    );
    expect(refused?.code).toBe(Code.NotFound);
    expect(refused?.metadata.get("deprecation")).toBe("@1767225600");
    // Both of this test's calls, the failed one too (not whatever earlier tests called).
    expect(await deprecatedCalls()).toBe(countedBefore + 2);
  });

  it("is idempotent: the same replacement again appends no event and returns the same sequence", async () => {
    const { idpId } = await create(`Idem ${protocol}`);
    const first = await idps(protocol).updateIdentityProvider({ idpId, name: `Idem ${protocol}`, stylingType: StylingType.VENDOR });
    const before = await eventCount();
    const second = await idps(protocol).updateIdentityProvider({ idpId, name: `Idem ${protocol}`, stylingType: StylingType.VENDOR });
    expect(await eventCount()).toBe(before);
    expect(second.details?.sequence).toBe(first.details?.sequence);
  });

  it("keeps names unique per organization, case-insensitively", async () => {
    await create(`Taken ${protocol}`);
    const { idpId } = await create(`Mine ${protocol}`);
    const error = await failure(idps(protocol).updateIdentityProvider({ idpId, name: `TAKEN ${protocol}` }));
    expect(error).toMatchObject({ code: Code.AlreadyExists, reason: "idp.already_exists" });
    await create(`Taken ${protocol}`, {}, otherOrgId);
  });

  it("answers not_found for an unknown IDP, another organization's, and the instance's", async () => {
    const { idpId: foreign } = await create(`Foreign ${protocol}`, {}, otherOrgId);
    const { idpId: instanceWide } = await create(`Instance ${protocol}`, { instanceLevel: true });
    for (const idpId of ["no-such-idp", foreign, instanceWide]) {
      expect(await failure(idps(protocol).updateIdentityProvider({ idpId, name: "x" }))).toMatchObject({ code: Code.NotFound, reason: "idp.not_found" });
    }
  });

  it("rejects unknown styling types and checks the name limit (1..200) and the id", async () => {
    const { idpId } = await create(`Limits ${protocol}`);
    const client = idps(protocol);
    await client.updateIdentityProvider({ idpId, name: `${protocol}-`.padEnd(200, "n") });
    const invalid = async (request: { idpId: string; name: string; stylingType?: StylingType }, field: string, rule: string) =>
      expect(await failure(client.updateIdentityProvider(request))).toMatchObject({ code: Code.InvalidArgument, reason: "request.invalid", fields: [field], rules: [rule] });
    await invalid({ idpId, name: "x", stylingType: 2 as StylingType }, "styling_type", "enum.defined_only");
    await invalid({ idpId, name: "n".repeat(201) }, "name", "string.max_len");
    await invalid({ idpId, name: "" }, "name", "string.min_len");
    await invalid({ idpId: "i".repeat(201), name: "x" }, "idp_id", "string.max_len");
  });
});
