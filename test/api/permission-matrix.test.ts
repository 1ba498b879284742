import { Code } from "@connectrpc/connect";
import { beforeAll, describe, expect, it } from "vitest";
import { ApplicationService } from "../../gen/gatehouse/admin/v1/application_pb.js";
import { IdentityProviderService } from "../../gen/gatehouse/admin/v1/identity_provider_pb.js";
import { ProjectService } from "../../gen/gatehouse/admin/v1/project_pb.js";
import type { Protocol } from "../support/clients.js";
import { errorShape } from "../support/errors.js";
import { useTestServer } from "../support/server.js";
import { buildWorld, createActor, type World } from "../support/world.js";

const t = useTestServer();
let world: World;

beforeAll(async () => {
  world = await buildWorld(t.clients, t.server.adminToken, "matrix");
});

type Outcome = "ok" | "permission_denied" | "not_found";
type ActorName = "iamOwner" | keyof World["actors"];

/** Who calls, with which token, naming which organization (undefined: their own). */
interface Row {
  name: string;
  actor: ActorName;
  orgId: (w: World) => string | undefined;
  grantMember: Outcome;
  updateApp: Outcome;
  updateIdp: Outcome;
}

const inA = (w: World) => w.orgA;
const ownOrg = () => undefined;
const rows: Row[] = [
  { name: "IAM_OWNER", actor: "iamOwner", orgId: inA, grantMember: "ok", updateApp: "ok", updateIdp: "ok" },
  { name: "ORG_OWNER of the project's organization", actor: "orgOwnerA", orgId: ownOrg, grantMember: "ok", updateApp: "ok", updateIdp: "ok" },
  {
    name: "ORG_OWNER of another organization, naming theirs",
    actor: "orgOwnerC",
    orgId: ownOrg,
    grantMember: "not_found",
    updateApp: "not_found",
    updateIdp: "not_found",
  },
  {
    name: "ORG_OWNER of another organization, naming the project's with x-service-orgid",
    actor: "orgOwnerC",
    orgId: inA,
    grantMember: "permission_denied",
    updateApp: "permission_denied",
    updateIdp: "permission_denied",
  },
  { name: "PROJECT_OWNER of this project", actor: "projectOwnerP1", orgId: inA, grantMember: "ok", updateApp: "ok", updateIdp: "permission_denied" },
  {
    name: "PROJECT_OWNER of another project",
    actor: "projectOwnerP2",
    orgId: inA,
    grantMember: "permission_denied",
    updateApp: "permission_denied",
    updateIdp: "permission_denied",
  },
  {
    name: "PROJECT_GRANT_OWNER of this grant",
    actor: "grantOwnerG1",
    orgId: inA,
    grantMember: "ok",
    updateApp: "permission_denied",
    updateIdp: "permission_denied",
  },
  {
    name: "PROJECT_GRANT_OWNER of another grant",
    actor: "grantOwnerG2",
    orgId: inA,
    grantMember: "permission_denied",
    updateApp: "permission_denied",
    updateIdp: "permission_denied",
  },
  {
    name: "a user with no membership",
    actor: "nobody",
    orgId: ownOrg,
    grantMember: "permission_denied",
    updateApp: "permission_denied",
    updateIdp: "permission_denied",
  },
];

async function outcomeOf(call: Promise<unknown>): Promise<Outcome | string> {
  try {
    await call;
    return "ok";
  } catch (error) {
    const shape = errorShape(error);
    if (shape.code === Code.PermissionDenied) return "permission_denied";
    if (shape.code === Code.NotFound) return "not_found";
    return `unexpected ${Code[shape.code]} ${shape.reason}`;
  }
}

function callerOptions(row: Row) {
  const token = row.actor === "iamOwner" ? t.server.adminToken : world.actors[row.actor].token;
  const orgId = row.orgId(world);
  return { token, ...(orgId ? { orgId } : {}) };
}

describe.each(rows)("permission matrix: $name", (row) => {
  const over = (protocol: Protocol) => ({ protocol, options: callerOptions(row) });

  it(`AddProjectGrantMember (grant G1) → ${row.grantMember}, over gRPC`, async () => {
    const { protocol, options } = over("grpc-h2c");
    const target = await createActor(t.clients, t.server.adminToken, world.orgB, `target-${rows.indexOf(row)}`);
    const projects = t.clients.client(ProjectService, protocol, options);
    expect(await outcomeOf(projects.addProjectGrantMember({ projectId: world.p1, grantId: world.g1, userId: target.userId }))).toBe(row.grantMember);
  });

  it(`UpdateApplication (app of P1) → ${row.updateApp}, over Connect JSON`, async () => {
    const { protocol, options } = over("connect-json-http1");
    const apps = t.clients.client(ApplicationService, protocol, options);
    expect(await outcomeOf(apps.updateApplication({ projectId: world.p1, appId: world.appId, name: `Web ${rows.indexOf(row)}` }))).toBe(row.updateApp);
  });

  it(`UpdateIdentityProvider (IDP of A) → ${row.updateIdp}, over gRPC-web`, async () => {
    const { protocol, options } = over("grpc-web-http1");
    const idps = t.clients.client(IdentityProviderService, protocol, options);
    expect(await outcomeOf(idps.updateIdentityProvider({ idpId: world.idpId, name: `SSO ${rows.indexOf(row)}` }))).toBe(row.updateIdp);
  });
});

describe("a grant owner's reach ends at their grant", () => {
  it("reads and manages members of THAT grant, and nothing else", async () => {
    const options = { token: world.actors.grantOwnerG1.token, orgId: world.orgA };
    const projects = t.clients.client(ProjectService, "connect-proto-h2c", options);
    const { grant } = await projects.getProjectGrant({ projectId: world.p1, grantId: world.g1 });
    expect(grant?.grantedOrganizationId).toBe(world.orgB);
    const target = await createActor(t.clients, t.server.adminToken, world.orgB, "reach-target");
    await projects.addProjectGrantMember({ projectId: world.p1, grantId: world.g1, userId: target.userId, roles: ["PROJECT_GRANT_OWNER_VIEWER"] });
    expect((await projects.listProjectGrantMembers({ projectId: world.p1, grantId: world.g1 })).members.map((m) => m.userId)).toContain(target.userId);
    await projects.removeProjectGrantMember({ projectId: world.p1, grantId: world.g1, userId: target.userId });

    const denied = async (call: Promise<unknown>) => expect(await outcomeOf(call)).toBe("permission_denied");
    await denied(projects.getProjectGrant({ projectId: world.p1, grantId: world.g2 }));
    await denied(projects.listProjectGrantMembers({ projectId: world.p1, grantId: world.g2 }));
    await denied(projects.getProject({ projectId: world.p1 }));
    await denied(projects.addProjectRole({ projectId: world.p1, roleKey: "x", displayName: "" }));
    const apps = t.clients.client(ApplicationService, "connect-proto-h2c", options);
    await denied(apps.getApplication({ projectId: world.p1, appId: world.appId }));
    await denied(apps.listApplications({ projectId: world.p1 }));
  });

  it("takes effect at once, and ends at once when the membership is removed", async () => {
    const admin = { token: t.server.adminToken, orgId: world.orgA };
    const newcomer = await createActor(t.clients, t.server.adminToken, world.orgB, "newcomer");
    const asNewcomer = t.clients.client(ProjectService, "grpc-h2c", { token: newcomer.token, orgId: world.orgA });
    const read = () => asNewcomer.getProjectGrant({ projectId: world.p1, grantId: world.g1 });
    expect(await outcomeOf(read())).toBe("permission_denied");
    const projects = t.clients.client(ProjectService, "grpc-h2c", admin);
    await projects.addProjectGrantMember({ projectId: world.p1, grantId: world.g1, userId: newcomer.userId, roles: ["PROJECT_GRANT_OWNER_VIEWER"] });
    expect(await outcomeOf(read())).toBe("ok");
    await projects.removeProjectGrantMember({ projectId: world.p1, grantId: world.g1, userId: newcomer.userId });
    expect(await outcomeOf(read())).toBe("permission_denied");
  });
});
