import { describe, expect, it } from "vitest";
import { ApplicationService, OidcAuthMethod } from "../../gen/gatehouse/admin/v1/application_pb.js";
import { OrganizationService } from "../../gen/gatehouse/admin/v1/organization_pb.js";
import { ProjectService } from "../../gen/gatehouse/admin/v1/project_pb.js";
import type { Details } from "../../gen/gatehouse/admin/v1/details_pb.js";
import { type Protocol, PROTOCOLS } from "../support/clients.js";
import { type Aggregate, aggregateAt, type Answer, createdAt, expectDetails, expectDetailsOfChange, later } from "../support/details-of-changes.js";
import { useTestServer } from "../support/server.js";
import { createActor } from "../support/world.js";

/*
 * API.md on `details`: a write answers the sequence and time of the last event it appended and the
 * object's FIRST event's time as `creation_date`; the resource owner is the organization that owns the
 * project. Which object a call describes (read from the proto docs and the event catalogue):
 * - project changes, AddProjectRole and RemoveProjectRole: the project (roles are part of it, their
 *   events are on the `project` aggregate);
 * - UpdateProjectGrant, RemoveProjectGrant: the grant (`project.grant`);
 * - Add…Member / Remove…Member: the membership, its own `member` aggregate ("Sequence and dates of the
 *   membership's removal event"); adding one creates it.
 * Every row creates the object later than what it belongs to, moves the server's clock on, changes it and
 * checks the answer against the object's own events in ListEvents.
 */
const t = useTestServer();
let n = 0;
const slug = (text: string) => `${text.toLowerCase().replace(/[^a-z0-9]+/g, "-")}-${++n}`;
const tick = () => later(t.server.clock);

/** An organization owning the project, a partner organization to grant it to, and the admin acting in the owner. */
async function setting(name: string) {
  const orgs = t.clients.client(OrganizationService, "connect-json-http1", { token: t.server.adminToken });
  const { organizationId: orgId } = await orgs.createOrganization({ name });
  const { organizationId: partnerId } = await orgs.createOrganization({ name: `${name} partner` });
  const projects = (protocol: Protocol = "connect-json-http1") => t.clients.client(ProjectService, protocol, { token: t.server.adminToken, orgId });
  const { projectId, details } = await projects().createProject({ name });
  return { name, orgId, partnerId, projects, projectId, projectCreatedAt: createdAt({ details }) };
}
type Setting = Awaited<ReturnType<typeof setting>>;

/** The object a change describes, when it was created, the change, and (when the object stays) how to read its details. */
interface Subject {
  of: Aggregate;
  createdAt: Date;
  change: (protocol: Protocol) => Promise<Answer>;
  read?: () => Promise<Details | undefined>;
}

const projectSubject = (s: Setting, change: Subject["change"], stays = true): Subject => ({
  of: { aggregateType: "project", aggregateId: s.projectId },
  createdAt: s.projectCreatedAt,
  change,
  ...(stays ? { read: async () => (await s.projects().getProject({ projectId: s.projectId })).project?.details } : {}),
});

/** A grant of the project to the partner, created later than the project. */
async function grantOf(s: Setting, roleKeys: string[] = []) {
  tick();
  const created = await s.projects().createProjectGrant({ projectId: s.projectId, grantedOrganizationId: s.partnerId, roleKeys });
  return { grantId: created.grantId, createdAt: createdAt(created) };
}

/** A user of the partner organization. */
const partnerUser = (s: Setting, suffix: string) => createActor(t.clients, t.server.adminToken, s.partnerId, `${s.name}-${suffix}`);

const rows: { rpc: string; arrange: (s: Setting) => Promise<Subject> }[] = [
  {
    rpc: "UpdateProject",
    arrange: async (s) => projectSubject(s, (protocol) => s.projects(protocol).updateProject({ projectId: s.projectId, name: `${s.name} renamed` })),
  },
  {
    rpc: "DeactivateProject",
    arrange: async (s) => projectSubject(s, (protocol) => s.projects(protocol).deactivateProject({ projectId: s.projectId })),
  },
  {
    rpc: "ReactivateProject",
    arrange: async (s) => {
      tick();
      await s.projects().deactivateProject({ projectId: s.projectId });
      return projectSubject(s, (protocol) => s.projects(protocol).reactivateProject({ projectId: s.projectId }));
    },
  },
  {
    rpc: "RemoveProject",
    arrange: async (s) => {
      // Everything under the project goes first, each removal its own event, then project.removed.
      tick();
      await s.projects().addProjectRole({ projectId: s.projectId, roleKey: "reader", displayName: "Reader" });
      const { grantId } = await grantOf(s, ["reader"]);
      const member = await partnerUser(s, "grant-member");
      await s.projects().addProjectGrantMember({ projectId: s.projectId, grantId, userId: member.userId, roles: ["PROJECT_GRANT_OWNER"] });
      await t.clients
        .client(ApplicationService, "connect-json-http1", { token: t.server.adminToken, orgId: s.orgId })
        .createOidcApplication({ projectId: s.projectId, name: "Web", redirectUris: ["https://app.example.com/cb"], authMethod: OidcAuthMethod.BASIC });
      return projectSubject(s, (protocol) => s.projects(protocol).removeProject({ projectId: s.projectId }), false);
    },
  },
  {
    rpc: "AddProjectRole",
    arrange: async (s) => projectSubject(s, (protocol) => s.projects(protocol).addProjectRole({ projectId: s.projectId, roleKey: "reader", displayName: "Reader" })),
  },
  {
    rpc: "RemoveProjectRole",
    arrange: async (s) => {
      tick();
      await s.projects().addProjectRole({ projectId: s.projectId, roleKey: "reader", displayName: "Reader" });
      // A grant handing the role out changes in the same write (its own event, on the grant): the answer is still the project's.
      await grantOf(s, ["reader"]);
      return projectSubject(s, (protocol) => s.projects(protocol).removeProjectRole({ projectId: s.projectId, roleKey: "reader" }));
    },
  },
  {
    rpc: "UpdateProjectGrant",
    arrange: async (s) => {
      await s.projects().addProjectRole({ projectId: s.projectId, roleKey: "reader", displayName: "Reader" });
      const grant = await grantOf(s);
      return {
        of: { aggregateType: "project.grant", aggregateId: grant.grantId },
        createdAt: grant.createdAt,
        change: (protocol) => s.projects(protocol).updateProjectGrant({ projectId: s.projectId, grantId: grant.grantId, roleKeys: ["reader"] }),
        read: async () => (await s.projects().getProjectGrant({ projectId: s.projectId, grantId: grant.grantId })).grant?.details,
      };
    },
  },
  {
    rpc: "RemoveProjectGrant",
    arrange: async (s) => {
      const grant = await grantOf(s);
      tick();
      const member = await partnerUser(s, "grant-member");
      await s.projects().addProjectGrantMember({ projectId: s.projectId, grantId: grant.grantId, userId: member.userId, roles: ["PROJECT_GRANT_OWNER_VIEWER"] });
      return {
        of: { aggregateType: "project.grant", aggregateId: grant.grantId },
        createdAt: grant.createdAt,
        change: (protocol) => s.projects(protocol).removeProjectGrant({ projectId: s.projectId, grantId: grant.grantId }),
      };
    },
  },
  {
    rpc: "RemoveProjectMember",
    arrange: async (s) => {
      const member = await partnerUser(s, "member");
      tick();
      const added = await s.projects().addProjectMember({ projectId: s.projectId, userId: member.userId, roles: ["PROJECT_OWNER_VIEWER"] });
      return {
        of: await aggregateAt(t.clients, t.server.adminToken, "member", added.details?.sequence),
        createdAt: createdAt(added),
        change: (protocol) => s.projects(protocol).removeProjectMember({ projectId: s.projectId, userId: member.userId }),
      };
    },
  },
  {
    rpc: "RemoveProjectGrantMember",
    arrange: async (s) => {
      const { grantId } = await grantOf(s);
      const member = await partnerUser(s, "grant-member");
      tick();
      const added = await s.projects().addProjectGrantMember({ projectId: s.projectId, grantId, userId: member.userId, roles: ["PROJECT_GRANT_OWNER"] });
      return {
        of: await aggregateAt(t.clients, t.server.adminToken, "member", added.details?.sequence),
        createdAt: createdAt(added),
        change: (protocol) => s.projects(protocol).removeProjectGrantMember({ projectId: s.projectId, grantId, userId: member.userId }),
      };
    },
  },
];

describe("details of a change to a project, its roles, grants and members (API.md `details`)", () => {
  it.each(rows.map((row, i) => [row.rpc, PROTOCOLS[i % PROTOCOLS.length]!, row] as const))(
    "%s over %s: sequence and time of the object's last event, the object's creation date, the project's organization",
    async (rpc, protocol, { arrange }) => {
      const s = await setting(slug(rpc));
      const subject = await arrange(s);
      const changedAt = tick();
      const answer = await subject.change(protocol);
      await expectDetailsOfChange(t.clients, t.server.adminToken, answer.details, { of: subject.of, createdAt: subject.createdAt, changedAt, resourceOwner: s.orgId });
      // On read, the object's details are those of its last event: the ones the change answered.
      if (subject.read) expect(await subject.read()).toEqual(answer.details);
    },
  );
});

const additions: { rpc: string; add: (s: Setting, protocol: Protocol) => Promise<{ answer: Answer; listed: () => Promise<{ userId: string; details?: Details }[]> }> }[] = [
  {
    rpc: "AddProjectMember",
    add: async (s, protocol) => {
      const member = await partnerUser(s, "member");
      tick();
      return {
        answer: await s.projects(protocol).addProjectMember({ projectId: s.projectId, userId: member.userId, roles: ["PROJECT_OWNER_VIEWER"] }),
        listed: async () => (await s.projects().listProjectMembers({ projectId: s.projectId })).members,
      };
    },
  },
  {
    rpc: "AddProjectGrantMember",
    add: async (s, protocol) => {
      const { grantId } = await grantOf(s);
      const member = await partnerUser(s, "grant-member");
      tick();
      return {
        answer: await s.projects(protocol).addProjectGrantMember({ projectId: s.projectId, grantId, userId: member.userId, roles: ["PROJECT_GRANT_OWNER"] }),
        listed: async () => (await s.projects().listProjectGrantMembers({ projectId: s.projectId, grantId })).members,
      };
    },
  },
];

describe("details of a new membership of a project or grant (API.md `details`: a create's two dates are the same)", () => {
  it.each(additions.map((row, i) => [row.rpc, PROTOCOLS[(i + 1) % PROTOCOLS.length]!, row] as const))(
    "%s over %s: the membership's one event, created now (not when the project or grant was), the project's organization",
    async (rpc, protocol, { add }) => {
      const s = await setting(slug(rpc));
      const { answer, listed } = await add(s, protocol);
      const changedAt = t.server.clock.now();
      expect(changedAt.getTime()).toBeGreaterThan(s.projectCreatedAt.getTime());
      const membership = await aggregateAt(t.clients, t.server.adminToken, "member", answer.details?.sequence);
      await expectDetails(t.clients, t.server.adminToken, answer.details, { of: membership, createdAt: changedAt, changedAt, resourceOwner: s.orgId });
      // The member list reads the membership's details: the same.
      expect((await listed()).map((member) => member.details)).toEqual([answer.details]);
    },
  );
});

const sameAgain: { rpc: string; arrange: (s: Setting) => Promise<{ of: Aggregate; createdAt: Date; update: (protocol: Protocol) => Promise<Answer> }> }[] = [
  {
    rpc: "UpdateProject",
    arrange: async (s) => ({
      of: { aggregateType: "project", aggregateId: s.projectId },
      createdAt: s.projectCreatedAt,
      update: (protocol) => s.projects(protocol).updateProject({ projectId: s.projectId, name: `${s.name} renamed` }),
    }),
  },
  {
    rpc: "UpdateProjectGrant",
    arrange: async (s) => {
      await s.projects().addProjectRole({ projectId: s.projectId, roleKey: "reader", displayName: "Reader" });
      const grant = await grantOf(s);
      return {
        of: { aggregateType: "project.grant", aggregateId: grant.grantId },
        createdAt: grant.createdAt,
        update: (protocol) => s.projects(protocol).updateProjectGrant({ projectId: s.projectId, grantId: grant.grantId, roleKeys: ["reader"] }),
      };
    },
  },
];

describe("details of an update that changes nothing (API.md: no event, the object's current details)", () => {
  it.each(sameAgain.map((row, i) => [row.rpc, PROTOCOLS[(i + 2) % PROTOCOLS.length]!, row] as const))(
    "%s over %s, sent twice: the second answers the first one's event and time, and the object's creation date",
    async (rpc, protocol, { arrange }) => {
      const s = await setting(slug(`${rpc} again`));
      const subject = await arrange(s);
      const changedAt = tick();
      const first = await subject.update("connect-json-http1");
      tick();
      const again = await subject.update(protocol);
      expect(again.details).toEqual(first.details);
      await expectDetailsOfChange(t.clients, t.server.adminToken, again.details, { of: subject.of, createdAt: subject.createdAt, changedAt, resourceOwner: s.orgId });
    },
  );
});
