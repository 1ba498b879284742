import { Code } from "@connectrpc/connect";
import { beforeAll, describe } from "vitest";
import { IdentityProviderService } from "../../gen/gatehouse/admin/v1/identity_provider_pb.js";
import { InstanceService } from "../../gen/gatehouse/admin/v1/instance_pb.js";
import { OrganizationService } from "../../gen/gatehouse/admin/v1/organization_pb.js";
import { ProjectService } from "../../gen/gatehouse/admin/v1/project_pb.js";
import { SmtpService } from "../../gen/gatehouse/admin/v1/smtp_pb.js";
import { UserService } from "../../gen/gatehouse/admin/v1/user_pb.js";
import { type CallOptions, type Protocol } from "../support/clients.js";
import { useTestServer } from "../support/server.js";
import { buildWorld, createActor, type World } from "../support/world.js";
import { itRefusesWithMetadata, type MetadataCase } from "../support/error-metadata.js";

/*
 * README "Errors": the ErrorInfo metadata names what the error is about, under the request's own field
 * names — the `organizationId` or `idpId` that was not found or may not be used, the `permission` a
 * denial misses. Organization selection, instance permissions, organization state and IDP RPCs.
 */
const t = useTestServer();
let w: World;
let n = 0;

beforeAll(async () => {
  w = await buildWorld(t.clients, t.server.adminToken, "errmeta-orgs");
});

const asAdmin = (orgId?: string): CallOptions => ({ token: t.server.adminToken, ...(orgId ? { orgId } : {}) });
const orgs = (protocol: Protocol, options: CallOptions = asAdmin()) => t.clients.client(OrganizationService, protocol, options);
const idps = (protocol: Protocol, options: CallOptions = asAdmin(w.orgA)) => t.clients.client(IdentityProviderService, protocol, options);
const projects = (protocol: Protocol, options: CallOptions) => t.clients.client(ProjectService, protocol, options);
const unknown = (what: string) => `no-such-${what}-${++n}`;
/** A new organization of the instance, its own per case. */
const freshOrganization = async () => (await orgs("connect-json-http1").createOrganization({ name: `errmeta org ${++n}` })).organizationId;
const idpRequest = () => ({ name: `errmeta SSO ${++n}`, issuer: "https://sso.example.com", clientId: "gatehouse", clientSecret: "s3cret-value" });

const cases: MetadataCase[] = [
  {
    name: "DeactivateOrganization: an unknown organization is named by its organizationId",
    code: Code.NotFound,
    reason: "organization.not_found",
    arrange: async (p) => {
      const organizationId = unknown("org");
      return { call: () => orgs(p).deactivateOrganization({ organizationId }), metadata: { organizationId } };
    },
  },
  {
    name: "ReactivateOrganization: an unknown organization is named by its organizationId",
    code: Code.NotFound,
    reason: "organization.not_found",
    arrange: async (p) => {
      const organizationId = unknown("org");
      return { call: () => orgs(p).reactivateOrganization({ organizationId }), metadata: { organizationId } };
    },
  },
  {
    name: "DeactivateOrganization: an ORG_OWNER misses the instance permission iam.write",
    code: Code.PermissionDenied,
    reason: "permission.denied",
    arrange: async (p) => ({ call: () => orgs(p, { token: w.actors.orgOwnerA.token }).deactivateOrganization({ organizationId: w.orgA }), metadata: { permission: "iam.write" } }),
  },
  {
    name: "CreateOrganization: an ORG_OWNER misses the instance permission org.create",
    code: Code.PermissionDenied,
    reason: "permission.denied",
    arrange: async (p) => ({ call: () => orgs(p, { token: w.actors.orgOwnerA.token }).createOrganization({ name: `errmeta refused ${++n}` }), metadata: { permission: "org.create" } }),
  },
  {
    name: "AddInstanceMember: an ORG_OWNER misses the instance permission iam.member.write",
    code: Code.PermissionDenied,
    reason: "permission.denied",
    arrange: async (p) => ({
      call: () => t.clients.client(InstanceService, p, { token: w.actors.orgOwnerA.token }).addInstanceMember({ userId: w.actors.nobody.userId, roles: ["IAM_OWNER_VIEWER"] }),
      metadata: { permission: "iam.member.write" },
    }),
  },
  {
    name: "RemoveSmtpConfig: an ORG_OWNER misses the instance permission iam.write",
    code: Code.PermissionDenied,
    reason: "permission.denied",
    arrange: async (p) => ({ call: () => t.clients.client(SmtpService, p, { token: w.actors.orgOwnerA.token }).removeSmtpConfig({}), metadata: { permission: "iam.write" } }),
  },
  {
    name: "CreateProject: a user without roles in its organization misses project.create",
    code: Code.PermissionDenied,
    reason: "permission.denied",
    arrange: async (p) => ({ call: () => projects(p, { token: w.actors.nobody.token }).createProject({ name: `errmeta refused ${++n}` }), metadata: { permission: "project.create" } }),
  },
  {
    name: "UpdateProject: the PROJECT_OWNER of another project misses project.write on this one",
    code: Code.PermissionDenied,
    reason: "permission.denied",
    arrange: async (p) => ({
      call: () => projects(p, { token: w.actors.projectOwnerP2.token, orgId: w.orgA }).updateProject({ projectId: w.p1, name: `errmeta refused ${++n}` }),
      metadata: { permission: "project.write" },
    }),
  },
  {
    name: "CreateMachineUser: a user without roles in its organization misses user.write",
    code: Code.PermissionDenied,
    reason: "permission.denied",
    arrange: async (p) => ({
      call: () => t.clients.client(UserService, p, { token: w.actors.nobody.token }).createMachineUser({ userName: `errmeta-refused-${++n}`, name: "Refused" }),
      metadata: { permission: "user.write" },
    }),
  },
  {
    name: "x-service-orgid: an organization the caller has no role in is named by the organizationId sent",
    code: Code.PermissionDenied,
    reason: "organization.access_denied",
    arrange: async (p) => ({ call: () => projects(p, { token: w.actors.orgOwnerC.token, orgId: w.orgA }).createProject({ name: `errmeta refused ${++n}` }), metadata: { organizationId: w.orgA } }),
  },
  {
    name: "x-service-orgid: an organization that does not exist is named by the organizationId sent, as one without a role",
    code: Code.PermissionDenied,
    reason: "organization.access_denied",
    arrange: async (p) => {
      const organizationId = unknown("org");
      return { call: () => projects(p, { token: w.actors.orgOwnerC.token, orgId: organizationId }).createProject({ name: `errmeta refused ${++n}` }), metadata: { organizationId } };
    },
  },
  {
    name: "x-service-orgid: a deactivated organization the caller holds a role in is named by its organizationId",
    code: Code.FailedPrecondition,
    reason: "organization.inactive",
    arrange: async (p) => {
      // A user of organization B (active, so it still authenticates) who owns another organization.
      const organizationId = await freshOrganization();
      const owner = await createActor(t.clients, t.server.adminToken, w.orgB, `errmeta-owner-${++n}`);
      await orgs("connect-json-http1", asAdmin(organizationId)).addOrganizationMember({ userId: owner.userId, roles: ["ORG_OWNER"] });
      await orgs("connect-json-http1").deactivateOrganization({ organizationId });
      return { call: () => projects(p, { token: owner.token, orgId: organizationId }).createProject({ name: `errmeta refused ${++n}` }), metadata: { organizationId } };
    },
  },
  {
    name: "UpdateIdentityProvider: an unknown IDP is named by its idpId",
    code: Code.NotFound,
    reason: "idp.not_found",
    arrange: async (p) => {
      const idpId = unknown("idp");
      return { call: () => idps(p).updateIdentityProvider({ idpId, name: "Renamed" }), metadata: { idpId } };
    },
  },
  {
    name: "UpdateIdentityProvider: an IDP of another organization than the selected one is named by its idpId",
    code: Code.NotFound,
    reason: "idp.not_found",
    arrange: async (p) => ({ call: () => idps(p, asAdmin(w.orgB)).updateIdentityProvider({ idpId: w.idpId, name: "Renamed" }), metadata: { idpId: w.idpId } }),
  },
  {
    name: "RemoveIdentityProvider: an unknown IDP is named by its idpId",
    code: Code.NotFound,
    reason: "idp.not_found",
    arrange: async (p) => {
      const idpId = unknown("idp");
      return { call: () => idps(p).removeIdentityProvider({ idpId }), metadata: { idpId } };
    },
  },
  {
    name: "RemoveIdentityProvider: an instance-level IDP, to an ORG_OWNER without iam.write, is named by its idpId",
    code: Code.NotFound,
    reason: "idp.not_found",
    arrange: async (p) => {
      const { idpId } = await idps("connect-json-http1").createIdentityProvider({ ...idpRequest(), instanceLevel: true });
      return { call: () => idps(p, { token: w.actors.orgOwnerA.token }).removeIdentityProvider({ idpId }), metadata: { idpId } };
    },
  },
];

describe("organization, permission and IDP errors name what they are about (README Errors)", () => {
  itRefusesWithMetadata(cases);
});
