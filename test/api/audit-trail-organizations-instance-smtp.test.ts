import { describe, expect, it } from "vitest";
import { InstanceService } from "../../gen/gatehouse/admin/v1/instance_pb.js";
import { OrganizationService } from "../../gen/gatehouse/admin/v1/organization_pb.js";
import { SmtpService } from "../../gen/gatehouse/admin/v1/smtp_pb.js";
import { AuditTrail, instanceIdOf, instanceOwner, orgWithOwner, type TrailEntry } from "../support/audit-trail.js";
import { type Protocol, PROTOCOLS } from "../support/clients.js";
import { useTestServer } from "../support/server.js";
import { createActor } from "../support/world.js";

/*
 * The instance, organization, membership and SMTP events of the catalogue at Event.payload
 * (proto/gatehouse/admin/v1/event.proto): the bootstrap's, and each one a real call causes, read back
 * through ListEvents filtered to the aggregate it is about.
 */
const t = useTestServer();
const trail = () => new AuditTrail(t.clients, t.server.adminToken);
const protocolOf = (i: number): Protocol => PROTOCOLS[i % PROTOCOLS.length]!;
const anId = expect.stringMatching(/^\S+$/);

describe("audit trail: organizations", () => {
  it("org.added carries the name, owned by the new organization; org.deactivated and org.reactivated an empty payload", async () => {
    const root = await instanceOwner(t.clients, t.server.adminToken, "trail-org-root");
    const orgs = (i: number) => t.clients.client(OrganizationService, protocolOf(i), { token: root.token });
    const created = await trail().record(() => orgs(0).createOrganization({ name: "Trail Org Inc" }), (r) => ({ aggregateType: "org", aggregateId: r.organizationId }), protocolOf(1));
    const orgId = created.response.organizationId;
    const entry = (type: string, payload: TrailEntry["payload"]): TrailEntry => ({ type, aggregateType: "org", aggregateId: orgId, resourceOwner: orgId, actor: root.userId, payload });
    expect(created.events).toEqual([entry("org.added", { name: "Trail Org Inc" })]);
    const of = { aggregateType: "org", aggregateId: orgId };
    expect((await trail().record(() => orgs(1).deactivateOrganization({ organizationId: orgId }), of, protocolOf(2))).events).toEqual([entry("org.deactivated", {})]);
    expect((await trail().record(() => orgs(2).reactivateOrganization({ organizationId: orgId }), of, protocolOf(3))).events).toEqual([entry("org.reactivated", {})]);
  });

  it("org.member.added and org.member.removed are on the membership's member aggregate: user, roles, level org, the organization as scope", async () => {
    const { orgId, owner } = await orgWithOwner(t.clients, t.server.adminToken, "trail-org-members");
    const member = await createActor(t.clients, t.server.adminToken, orgId, "trail-org-member");
    const orgs = t.clients.client(OrganizationService, "grpc-web-http1", { token: owner.token, orgId });
    const payload = { userId: member.userId, roles: ["ORG_OWNER_VIEWER", "ORG_USER_MANAGER"], level: "org", scopeId: orgId };
    const entry = (type: string, aggregateId: unknown): TrailEntry => ({ type, aggregateType: "member", aggregateId: aggregateId as string, resourceOwner: orgId, actor: owner.userId, payload });
    const added = await trail().record(() => orgs.addOrganizationMember({ userId: member.userId, roles: ["ORG_OWNER_VIEWER", "ORG_USER_MANAGER"] }), { aggregateType: "member" }, "grpc-web-http1");
    expect(added.events).toEqual([entry("org.member.added", anId)]);
    const membershipId = added.events[0]!.aggregateId;
    const removed = await trail().record(() => orgs.removeOrganizationMember({ userId: member.userId }), { aggregateType: "member", aggregateId: membershipId });
    expect(removed.events).toEqual([entry("org.member.removed", membershipId)]);
  });
});

describe("audit trail: instance members", () => {
  it("instance.member.added and instance.member.removed: level instance, the instance as scope and as resource owner", async () => {
    const root = await instanceOwner(t.clients, t.server.adminToken, "trail-instance-root");
    const instanceId = await instanceIdOf(t.clients, t.server.adminToken);
    const { orgId } = await orgWithOwner(t.clients, t.server.adminToken, "trail-instance-members");
    const member = await createActor(t.clients, t.server.adminToken, orgId, "trail-instance-member");
    const instance = t.clients.client(InstanceService, "connect-proto-h2c", { token: root.token });
    const payload = { userId: member.userId, roles: ["IAM_OWNER_VIEWER"], level: "instance", scopeId: instanceId };
    const entry = (type: string, aggregateId: unknown): TrailEntry => ({ type, aggregateType: "member", aggregateId: aggregateId as string, resourceOwner: instanceId, actor: root.userId, payload });
    const added = await trail().record(() => instance.addInstanceMember({ userId: member.userId, roles: ["IAM_OWNER_VIEWER"] }), { aggregateType: "member" }, "connect-proto-h2c");
    expect(added.events).toEqual([entry("instance.member.added", anId)]);
    const membershipId = added.events[0]!.aggregateId;
    const removed = await trail().record(() => instance.removeInstanceMember({ userId: member.userId }), { aggregateType: "member", aggregateId: membershipId }, "grpc-h2c");
    expect(removed.events).toEqual([entry("instance.member.removed", membershipId)]);
  });
});

describe("audit trail: SMTP configuration", () => {
  it("smtp.added and smtp.changed carry the settings and whether a password is kept (never the password); smtp.password.set and smtp.removed nothing", async () => {
    const root = await instanceOwner(t.clients, t.server.adminToken, "trail-smtp-root");
    const instanceId = await instanceIdOf(t.clients, t.server.adminToken);
    const smtp = (i: number) => t.clients.client(SmtpService, protocolOf(i), { token: root.token });
    const of = { aggregateType: "smtp", aggregateId: instanceId };
    const entry = (type: string, payload: TrailEntry["payload"]): TrailEntry => ({ type, aggregateType: "smtp", aggregateId: instanceId, resourceOwner: instanceId, actor: root.userId, payload });
    const settings = { senderAddress: "noreply@trail.example.com", senderName: "Trail IAM", tls: true, host: "smtp.trail.example.com:587", user: "mailer" };
    const password = "smtp-password-never-logged";

    const added = await trail().record(() => smtp(0).createSmtpConfig({ ...settings, senderAddress: "  noreply@trail.example.com ", password }), of, protocolOf(1));
    expect(added.events).toEqual([entry("smtp.added", { ...settings, hasPassword: true })]);

    // A new sender name keeps the password ...
    const renamed = await trail().record(() => smtp(1).updateSmtpConfig({ ...settings, senderName: "Trail IAM (new)" }), of, protocolOf(2));
    expect(renamed.events).toEqual([entry("smtp.changed", { ...settings, senderName: "Trail IAM (new)", hasPassword: true, passwordDropped: false })]);
    // ... a new host drops it ...
    const moved = await trail().record(() => smtp(2).updateSmtpConfig({ ...settings, host: "smtp2.trail.example.com:587" }), of, protocolOf(3));
    expect(moved.events).toEqual([entry("smtp.changed", { ...settings, host: "smtp2.trail.example.com:587", hasPassword: false, passwordDropped: true })]);
    // ... and with none stored there is nothing to drop.
    const movedAgain = await trail().record(() => smtp(3).updateSmtpConfig({ ...settings, host: "smtp3.trail.example.com:587" }), of);
    expect(movedAgain.events).toEqual([entry("smtp.changed", { ...settings, host: "smtp3.trail.example.com:587", hasPassword: false, passwordDropped: false })]);

    const passwordSet = await trail().record(() => smtp(0).setSmtpPassword({ password }), of, protocolOf(2));
    expect(passwordSet.events).toEqual([entry("smtp.password.set", {})]);
    // Turning TLS off drops the password too.
    const cleartext = await trail().record(() => smtp(1).updateSmtpConfig({ ...settings, host: "smtp3.trail.example.com:587", tls: false }), of);
    expect(cleartext.events).toEqual([entry("smtp.changed", { ...settings, host: "smtp3.trail.example.com:587", tls: false, hasPassword: false, passwordDropped: true })]);

    const removed = await trail().record(() => smtp(2).removeSmtpConfig({}), of, protocolOf(3));
    expect(removed.events).toEqual([entry("smtp.removed", {})]);

    const withoutPassword = await trail().record(() => smtp(3).createSmtpConfig({ ...settings, user: "" }), of);
    expect(withoutPassword.events).toEqual([entry("smtp.added", { ...settings, user: "", hasPassword: false })]);
    await smtp(0).removeSmtpConfig({});

    const all = await trail().all(of);
    expect(JSON.stringify(all.map((event) => event.payload))).not.toContain(password);
  });
});
