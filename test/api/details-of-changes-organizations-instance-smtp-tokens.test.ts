import { describe, expect, it } from "vitest";
import type { Details } from "../../gen/gatehouse/admin/v1/details_pb.js";
import { InstanceService } from "../../gen/gatehouse/admin/v1/instance_pb.js";
import { OrganizationService } from "../../gen/gatehouse/admin/v1/organization_pb.js";
import { SmtpService } from "../../gen/gatehouse/admin/v1/smtp_pb.js";
import { UserService } from "../../gen/gatehouse/admin/v1/user_pb.js";
import { instanceIdOf } from "../support/audit-trail.js";
import { Clients, type Protocol, PROTOCOLS } from "../support/clients.js";
import { type Aggregate, aggregateAt, type Answer, createdAt, dateOf, expectDetails, expectDetailsOfChange, later } from "../support/details-of-changes.js";
import { type TestServer, useTestServer, withFreshServer } from "../support/server.js";
import { createActor } from "../support/world.js";

/*
 * API.md on `details`: a write answers the sequence and time of the last event it appended and the
 * object's FIRST event's time as `creation_date`. Which object a call describes:
 * - Deactivate/ReactivateOrganization: the organization, which is its own resource owner;
 * - Remove…Member: the membership (its own `member` aggregate, "the membership's removal event"), owned
 *   by the organization or, at instance level, by the instance id; Add…Member creates one;
 * - Add/RemovePersonalAccessToken: the user (a token is the user's credential; its events are on the
 *   `user` aggregate), owned by the user's organization;
 * - the SMTP calls: the instance's one configuration (`smtp` aggregate), owned by the instance id.
 * Every row creates the object, moves the server's clock on, changes it and checks the answer against the
 * object's own events in ListEvents.
 */
const t = useTestServer();
let n = 0;
const slug = (text: string) => `${text.toLowerCase().replace(/[^a-z0-9]+/g, "-")}-${++n}`;
const tick = () => later(t.server.clock);
const orgs = (protocol: Protocol = "connect-json-http1", orgId?: string) =>
  t.clients.client(OrganizationService, protocol, { token: t.server.adminToken, ...(orgId ? { orgId } : {}) });
const instance = (protocol: Protocol = "connect-json-http1") => t.clients.client(InstanceService, protocol, { token: t.server.adminToken });
const users = (orgId: string, protocol: Protocol = "connect-json-http1") => t.clients.client(UserService, protocol, { token: t.server.adminToken, orgId });

interface Subject {
  of: Aggregate;
  createdAt: Date;
  resourceOwner: string;
  change: (protocol: Protocol) => Promise<Answer>;
  /** How to read the object's details afterwards (absent when the change removes it). */
  read?: () => Promise<Details | undefined>;
}

async function organization(name: string) {
  const created = await orgs().createOrganization({ name });
  return { orgId: created.organizationId, createdAt: createdAt(created) };
}

/** A machine user of a new organization, created at the current clock time. */
async function machineUser(name: string) {
  const { orgId } = await organization(name);
  const created = await users(orgId).createMachineUser({ userName: name, name });
  return { orgId, userId: created.userId, createdAt: createdAt(created) };
}

const rows: { rpc: string; arrange: (name: string) => Promise<Subject> }[] = [
  {
    rpc: "DeactivateOrganization",
    arrange: async (name) => {
      const org = await organization(name);
      return {
        of: { aggregateType: "org", aggregateId: org.orgId },
        createdAt: org.createdAt,
        resourceOwner: org.orgId,
        change: (protocol) => orgs(protocol).deactivateOrganization({ organizationId: org.orgId }),
        read: async () => (await orgs().getOrganization({ organizationId: org.orgId })).organization?.details,
      };
    },
  },
  {
    rpc: "ReactivateOrganization",
    arrange: async (name) => {
      const org = await organization(name);
      tick();
      await orgs().deactivateOrganization({ organizationId: org.orgId });
      return {
        of: { aggregateType: "org", aggregateId: org.orgId },
        createdAt: org.createdAt,
        resourceOwner: org.orgId,
        change: (protocol) => orgs(protocol).reactivateOrganization({ organizationId: org.orgId }),
        read: async () => (await orgs().getOrganization({ organizationId: org.orgId })).organization?.details,
      };
    },
  },
  {
    rpc: "RemoveOrganizationMember",
    arrange: async (name) => {
      const { orgId } = await organization(name);
      const member = await createActor(t.clients, t.server.adminToken, orgId, `${name}-member`);
      tick();
      const added = await orgs("connect-json-http1", orgId).addOrganizationMember({ userId: member.userId, roles: ["ORG_OWNER_VIEWER"] });
      return {
        of: await aggregateAt(t.clients, t.server.adminToken, "member", added.details?.sequence),
        createdAt: createdAt(added),
        resourceOwner: orgId,
        change: (protocol) => orgs(protocol, orgId).removeOrganizationMember({ userId: member.userId }),
      };
    },
  },
  {
    rpc: "RemoveInstanceMember",
    arrange: async (name) => {
      const { orgId } = await organization(name);
      const member = await createActor(t.clients, t.server.adminToken, orgId, `${name}-member`);
      tick();
      const added = await instance().addInstanceMember({ userId: member.userId, roles: ["IAM_OWNER_VIEWER"] });
      return {
        of: await aggregateAt(t.clients, t.server.adminToken, "member", added.details?.sequence),
        createdAt: createdAt(added),
        resourceOwner: await instanceIdOf(t.clients, t.server.adminToken),
        change: (protocol) => instance(protocol).removeInstanceMember({ userId: member.userId }),
      };
    },
  },
  {
    rpc: "AddPersonalAccessToken",
    arrange: async (name) => {
      const user = await machineUser(name);
      return {
        of: { aggregateType: "user", aggregateId: user.userId },
        createdAt: user.createdAt,
        resourceOwner: user.orgId,
        change: (protocol) => users(user.orgId, protocol).addPersonalAccessToken({ userId: user.userId }),
        read: async () => (await users(user.orgId).getUser({ userId: user.userId })).user?.details,
      };
    },
  },
  {
    rpc: "RemovePersonalAccessToken",
    arrange: async (name) => {
      const user = await machineUser(name);
      tick();
      const { tokenId } = await users(user.orgId).addPersonalAccessToken({ userId: user.userId });
      return {
        of: { aggregateType: "user", aggregateId: user.userId },
        createdAt: user.createdAt,
        resourceOwner: user.orgId,
        change: (protocol) => users(user.orgId, protocol).removePersonalAccessToken({ userId: user.userId, tokenId }),
        read: async () => (await users(user.orgId).getUser({ userId: user.userId })).user?.details,
      };
    },
  },
];

describe("details of a change to an organization, a membership or a user's tokens (API.md `details`)", () => {
  it.each(rows.map((row, i) => [row.rpc, PROTOCOLS[i % PROTOCOLS.length]!, row] as const))(
    "%s over %s: sequence and time of the object's last event, the object's creation date, its resource owner",
    async (rpc, protocol, { arrange }) => {
      const subject = await arrange(slug(rpc));
      const changedAt = tick();
      const answer = await subject.change(protocol);
      await expectDetailsOfChange(t.clients, t.server.adminToken, answer.details, {
        of: subject.of,
        createdAt: subject.createdAt,
        changedAt,
        resourceOwner: subject.resourceOwner,
      });
      // On read, the object's details are those of its last event: the ones the change answered.
      if (subject.read) expect(await subject.read()).toEqual(answer.details);
    },
  );
});

const additions: { rpc: string; add: (userId: string, orgId: string, protocol: Protocol) => Promise<{ answer: Answer; resourceOwner: string; listed: () => Promise<{ userId: string; details?: Details }[]> }> }[] = [
  {
    rpc: "AddOrganizationMember",
    add: async (userId, orgId, protocol) => ({
      answer: await orgs(protocol, orgId).addOrganizationMember({ userId, roles: ["ORG_USER_MANAGER"] }),
      resourceOwner: orgId,
      listed: async () => (await orgs("connect-json-http1", orgId).listOrganizationMembers({})).members,
    }),
  },
  {
    rpc: "AddInstanceMember",
    add: async (userId, _orgId, protocol) => ({
      answer: await instance(protocol).addInstanceMember({ userId, roles: ["IAM_OWNER_VIEWER"] }),
      resourceOwner: await instanceIdOf(t.clients, t.server.adminToken),
      listed: async () => (await instance().listInstanceMembers({ pageSize: 1000 })).members,
    }),
  },
];

describe("details of a new organization or instance membership (API.md `details`: a create's two dates are the same)", () => {
  it.each(additions.map((row, i) => [row.rpc, PROTOCOLS[(i + 2) % PROTOCOLS.length]!, row] as const))(
    "%s over %s: the membership's one event, created now (not when the user or organization was), its resource owner",
    async (rpc, protocol, { add }) => {
      const user = await machineUser(slug(rpc));
      const changedAt = tick();
      const { answer, resourceOwner, listed } = await add(user.userId, user.orgId, protocol);
      const membership = await aggregateAt(t.clients, t.server.adminToken, "member", answer.details?.sequence);
      await expectDetails(t.clients, t.server.adminToken, answer.details, { of: membership, createdAt: changedAt, changedAt, resourceOwner });
      // The member list reads the membership's details: the same.
      expect((await listed()).filter((member) => member.userId === user.userId).map((member) => member.details)).toEqual([answer.details]);
    },
  );
});

/*
 * The SMTP configuration is one per instance, so each row runs on a server of its own: what another test
 * did to the configuration must not decide its creation date (withFreshServer).
 */
const settings = { senderAddress: "noreply@gatehouse.test", senderName: "Gatehouse", tls: true, host: "smtp.example.com:587", user: "mailer" };
type Smtp = ReturnType<typeof smtpOf>;
const smtpOf = (clients: Clients, server: TestServer) => (protocol: Protocol = "connect-json-http1") => clients.client(SmtpService, protocol, { token: server.adminToken });

const smtpRows: { rpc: string; arrange: (smtp: Smtp, server: TestServer) => Promise<{ change: (protocol: Protocol) => Promise<Answer>; removes?: boolean }> }[] = [
  { rpc: "UpdateSmtpConfig", arrange: async (smtp) => ({ change: (protocol) => smtp(protocol).updateSmtpConfig({ ...settings, senderName: "Gatehouse Mail" }) }) },
  {
    rpc: "UpdateSmtpConfig (new host: the password is dropped)",
    arrange: async (smtp, server) => {
      later(server.clock);
      await smtp().setSmtpPassword({ password: "relay-password" });
      return { change: (protocol) => smtp(protocol).updateSmtpConfig({ ...settings, host: "relay.example.com:587" }) };
    },
  },
  { rpc: "SetSmtpPassword", arrange: async (smtp) => ({ change: (protocol) => smtp(protocol).setSmtpPassword({ password: "relay-password" }) }) },
  {
    rpc: "RemoveSmtpConfig",
    arrange: async (smtp, server) => {
      later(server.clock);
      await smtp().setSmtpPassword({ password: "relay-password" });
      return { removes: true, change: (protocol) => smtp(protocol).removeSmtpConfig({}) };
    },
  },
];

describe("details of a change to the SMTP configuration (API.md `details`; owned by the instance)", () => {
  it.each(smtpRows.map((row, i) => [row.rpc, PROTOCOLS[(i + 1) % PROTOCOLS.length]!, row] as const))(
    "%s over %s: sequence and time of the configuration's last event, its creation date, the instance id",
    async (rpc, protocol, { arrange }) => {
      await withFreshServer(async (server, clients) => {
        const smtp = smtpOf(clients, server);
        const instanceId = await instanceIdOf(clients, server.adminToken);
        later(server.clock);
        const created = await smtp().createSmtpConfig({ ...settings, password: "first-password" });
        const subject = await arrange(smtp, server);
        const changedAt = later(server.clock);
        const answer = await subject.change(protocol);
        await expectDetailsOfChange(clients, server.adminToken, answer.details, {
          of: { aggregateType: "smtp", aggregateId: instanceId },
          createdAt: createdAt(created),
          changedAt,
          resourceOwner: instanceId,
        });
        if (!subject.removes) expect((await smtp().getSmtpConfig({})).config?.details).toEqual(answer.details);
      });
    },
  );

  it("UpdateSmtpConfig sent twice: the second changes nothing and answers the first one's event and time, and the configuration's creation date", async () => {
    await withFreshServer(async (server, clients) => {
      const smtp = smtpOf(clients, server);
      const instanceId = await instanceIdOf(clients, server.adminToken);
      const created = await smtp().createSmtpConfig(settings);
      const changedAt = later(server.clock);
      const first = await smtp().updateSmtpConfig({ ...settings, senderName: "Gatehouse Mail" });
      later(server.clock);
      const again = await smtp("grpc-web-http1").updateSmtpConfig({ ...settings, senderName: "Gatehouse Mail" });
      expect(again.details).toEqual(first.details);
      await expectDetailsOfChange(clients, server.adminToken, again.details, {
        of: { aggregateType: "smtp", aggregateId: instanceId },
        createdAt: createdAt(created),
        changedAt,
        resourceOwner: instanceId,
      });
    });
  });

  // The configuration lives on one `smtp` aggregate per instance (its id is the instance id); one created again
  // after RemoveSmtpConfig is a new object, so its creation date is its new create's, not the removed one's.
  it("a configuration created again after RemoveSmtpConfig keeps the creation date its create answered (it is a new object)", async () => {
    await withFreshServer(async (server, clients) => {
      const smtp = smtpOf(clients, server);
      const instanceId = await instanceIdOf(clients, server.adminToken);
      await smtp().createSmtpConfig(settings);
      later(server.clock);
      await smtp().removeSmtpConfig({});
      later(server.clock);
      const again = await smtp().createSmtpConfig(settings);
      const changedAt = later(server.clock);
      const { details } = await smtp("grpc-h2c").updateSmtpConfig({ ...settings, senderName: "Gatehouse Mail" });
      expect(details?.sequence).toBeGreaterThan(again.details?.sequence ?? 0n);
      expect(details?.resourceOwner).toBe(instanceId);
      expect({ creationDate: dateOf(details?.creationDate), changeDate: dateOf(details?.changeDate) }).toEqual({ creationDate: createdAt(again), changeDate: changedAt });
      const read = (await smtp("connect-proto-h2c").getSmtpConfig({})).config?.details;
      expect({ creationDate: dateOf(read?.creationDate), sequence: read?.sequence }).toEqual({ creationDate: createdAt(again), sequence: details?.sequence });
    });
  });
});
