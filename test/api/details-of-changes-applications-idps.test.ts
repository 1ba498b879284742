import { describe, expect, it } from "vitest";
import { ApiAuthMethod, ApplicationService, OidcAuthMethod } from "../../gen/gatehouse/admin/v1/application_pb.js";
import type { Details } from "../../gen/gatehouse/admin/v1/details_pb.js";
import { IdentityProviderService } from "../../gen/gatehouse/admin/v1/identity_provider_pb.js";
import { OrganizationService } from "../../gen/gatehouse/admin/v1/organization_pb.js";
import { ProjectService } from "../../gen/gatehouse/admin/v1/project_pb.js";
import { UserService } from "../../gen/gatehouse/admin/v1/user_pb.js";
import { instanceIdOf } from "../support/audit-trail.js";
import { type Protocol, PROTOCOLS } from "../support/clients.js";
import { type Answer, createdAt, expectDetailsOfChange, later } from "../support/details-of-changes.js";
import { useTestServer } from "../support/server.js";

/*
 * API.md on `details`: a write answers the sequence and time of the last event it appended and the
 * object's FIRST event's time as `creation_date`. An application's details are the application's
 * (resource owner: the project's organization); an identity provider's are the IDP's (resource owner:
 * its organization, or the instance id for an instance-level IDP). Every row creates the object later
 * than what it belongs to, moves the server's clock on, changes it and checks the answer against the
 * object's own events in ListEvents.
 */
const t = useTestServer();
let n = 0;
const slug = (text: string) => `${text.toLowerCase().replace(/[^a-z0-9]+/g, "-")}-${++n}`;
const tick = () => later(t.server.clock);

async function organization(name: string) {
  const { organizationId: orgId } = await t.clients.client(OrganizationService, "connect-json-http1", { token: t.server.adminToken }).createOrganization({ name });
  const as = { token: t.server.adminToken, orgId };
  return {
    name,
    orgId,
    apps: (protocol: Protocol = "connect-json-http1") => t.clients.client(ApplicationService, protocol, as),
    idps: (protocol: Protocol = "connect-json-http1") => t.clients.client(IdentityProviderService, protocol, as),
    users: () => t.clients.client(UserService, "connect-json-http1", as),
    projects: () => t.clients.client(ProjectService, "connect-json-http1", as),
  };
}
type Org = Awaited<ReturnType<typeof organization>>;

interface Subject {
  aggregateId: string;
  createdAt: Date;
  resourceOwner: string;
  change: (protocol: Protocol) => Promise<Answer>;
  /** How to read the object's details afterwards (absent for a removal). */
  read?: () => Promise<Details | undefined>;
}

/** A project, then (later) an application of it: an OIDC client with a secret, or an API client with one. */
async function application(org: Org, kind: "oidc" | "api" = "oidc") {
  const { projectId } = await org.projects().createProject({ name: org.name });
  tick();
  const created =
    kind === "oidc"
      ? await org.apps().createOidcApplication({ projectId, name: "Web", redirectUris: ["https://app.example.com/cb"], authMethod: OidcAuthMethod.BASIC })
      : await org.apps().createApiApplication({ projectId, name: "Api", authMethod: ApiAuthMethod.BASIC });
  const ids = { projectId, appId: created.appId };
  return {
    ids,
    aggregateId: created.appId,
    createdAt: createdAt(created),
    resourceOwner: org.orgId,
    read: async () => (await org.apps().getApplication(ids)).app?.details,
  };
}

/** An identity provider of the organization (or of the instance), with a user of the organization linked to it later. */
async function identityProvider(org: Org, instanceLevel = false) {
  const created = await org.idps().createIdentityProvider({
    name: org.name,
    issuer: "https://sso.example.com",
    clientId: "gatehouse",
    clientSecret: "idp-secret-value",
    instanceLevel,
  });
  return {
    idpId: created.idpId,
    aggregateId: created.idpId,
    createdAt: createdAt(created),
    resourceOwner: instanceLevel ? await instanceIdOf(t.clients, t.server.adminToken) : org.orgId,
    read: async () => (await org.idps().getIdentityProvider({ idpId: created.idpId })).idp?.details,
  };
}

async function linkUser(org: Org, idpId: string) {
  tick();
  await org.users().createHumanUser({
    userName: `${org.name}-linked`,
    profile: { firstName: "Lin", lastName: "Ked" },
    email: { email: `${org.name}-linked@example.com`, isEmailVerified: true },
    idps: [{ configId: idpId, externalUserId: `${org.name}-ext` }],
  });
}

const applicationRows: { rpc: string; arrange: (org: Org) => Promise<Subject> }[] = [
  {
    rpc: "UpdateApplication",
    arrange: async (org) => {
      const app = await application(org);
      return { ...app, change: (protocol) => org.apps(protocol).updateApplication({ ...app.ids, name: "Web renamed" }) };
    },
  },
  {
    rpc: "DeactivateApplication",
    arrange: async (org) => {
      const app = await application(org, "api");
      return { ...app, change: (protocol) => org.apps(protocol).deactivateApplication(app.ids) };
    },
  },
  {
    rpc: "ReactivateApplication",
    arrange: async (org) => {
      const app = await application(org);
      tick();
      await org.apps().deactivateApplication(app.ids);
      return { ...app, change: (protocol) => org.apps(protocol).reactivateApplication(app.ids) };
    },
  },
  {
    rpc: "RemoveApplication",
    arrange: async (org) => {
      const { read: _gone, ...app } = await application(org);
      return { ...app, change: (protocol) => org.apps(protocol).removeApplication(app.ids) };
    },
  },
  {
    rpc: "RegenerateClientSecret (OIDC)",
    arrange: async (org) => {
      const app = await application(org);
      return { ...app, change: (protocol) => org.apps(protocol).regenerateClientSecret(app.ids) };
    },
  },
  {
    rpc: "RegenerateClientSecret (API)",
    arrange: async (org) => {
      const app = await application(org, "api");
      return { ...app, change: (protocol) => org.apps(protocol).regenerateClientSecret(app.ids) };
    },
  },
];

const idpRows: { rpc: string; arrange: (org: Org) => Promise<Subject> }[] = [
  {
    rpc: "UpdateIdentityProvider",
    arrange: async (org) => {
      const idp = await identityProvider(org);
      return { ...idp, change: (protocol) => org.idps(protocol).updateIdentityProvider({ idpId: idp.idpId, name: `${org.name} renamed` }) };
    },
  },
  {
    rpc: "RemoveIdentityProvider (of the organization)",
    arrange: async (org) => {
      const { read: _gone, ...idp } = await identityProvider(org);
      // The link's removal (an event on the user) comes first in the same write; the answer is the IDP's.
      await linkUser(org, idp.idpId);
      return { ...idp, change: (protocol) => org.idps(protocol).removeIdentityProvider({ idpId: idp.idpId }) };
    },
  },
  {
    rpc: "RemoveIdentityProvider (of the instance)",
    arrange: async (org) => {
      const { read: _gone, ...idp } = await identityProvider(org, true);
      await linkUser(org, idp.idpId);
      return { ...idp, change: (protocol) => org.idps(protocol).removeIdentityProvider({ idpId: idp.idpId }) };
    },
  },
];

const tables = [
  { area: "an application", aggregateType: "application", rows: applicationRows },
  { area: "an identity provider", aggregateType: "idp", rows: idpRows },
];

describe.each(tables)("details of a change to $area (API.md `details`)", ({ aggregateType, rows }) => {
  it.each(rows.map((row, i) => [row.rpc, PROTOCOLS[i % PROTOCOLS.length]!, row] as const))(
    "%s over %s: sequence and time of its last event, its creation date, its resource owner",
    async (rpc, protocol, { arrange }) => {
      const subject = await arrange(await organization(slug(rpc)));
      const changedAt = tick();
      const answer = await subject.change(protocol);
      await expectDetailsOfChange(t.clients, t.server.adminToken, answer.details, {
        of: { aggregateType, aggregateId: subject.aggregateId },
        createdAt: subject.createdAt,
        changedAt,
        resourceOwner: subject.resourceOwner,
      });
      // On read, the object's details are those of its last event: the ones the change answered.
      if (subject.read) expect(await subject.read()).toEqual(answer.details);
    },
  );
});

const sameAgain: { rpc: string; aggregateType: string; arrange: (org: Org) => Promise<Omit<Subject, "change"> & { update: (protocol: Protocol) => Promise<Answer> }> }[] = [
  {
    rpc: "UpdateApplication",
    aggregateType: "application",
    arrange: async (org) => {
      const app = await application(org);
      return { ...app, update: (protocol) => org.apps(protocol).updateApplication({ ...app.ids, name: "Web renamed" }) };
    },
  },
  {
    rpc: "UpdateIdentityProvider",
    aggregateType: "idp",
    arrange: async (org) => {
      const idp = await identityProvider(org);
      return { ...idp, update: (protocol) => org.idps(protocol).updateIdentityProvider({ idpId: idp.idpId, name: `${org.name} renamed`, autoRegister: true }) };
    },
  },
];

describe("details of an update that changes nothing (API.md: no event, the object's current details)", () => {
  it.each(sameAgain.map((row, i) => [row.rpc, PROTOCOLS[(i + 2) % PROTOCOLS.length]!, row] as const))(
    "%s over %s, sent twice: the second answers the first one's event and time, and the object's creation date",
    async (rpc, protocol, { aggregateType, arrange }) => {
      const subject = await arrange(await organization(slug(`${rpc} again`)));
      const changedAt = tick();
      const first = await subject.update("connect-json-http1");
      tick();
      const again = await subject.update(protocol);
      expect(again.details).toEqual(first.details);
      await expectDetailsOfChange(t.clients, t.server.adminToken, again.details, {
        of: { aggregateType, aggregateId: subject.aggregateId },
        createdAt: subject.createdAt,
        changedAt,
        resourceOwner: subject.resourceOwner,
      });
    },
  );
});
