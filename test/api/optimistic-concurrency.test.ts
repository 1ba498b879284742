import type { DescService } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { beforeAll, describe, expect, it } from "vitest";
import { ApplicationService, OidcAuthMethod } from "../../gen/gatehouse/admin/v1/application_pb.js";
import { EventService } from "../../gen/gatehouse/admin/v1/event_pb.js";
import { IdentityProviderService } from "../../gen/gatehouse/admin/v1/identity_provider_pb.js";
import { InstanceService } from "../../gen/gatehouse/admin/v1/instance_pb.js";
import { OrganizationService } from "../../gen/gatehouse/admin/v1/organization_pb.js";
import { ProjectService } from "../../gen/gatehouse/admin/v1/project_pb.js";
import { SmtpService } from "../../gen/gatehouse/admin/v1/smtp_pb.js";
import { UserService } from "../../gen/gatehouse/admin/v1/user_pb.js";
import type { Protocol } from "../support/clients.js";
import { errorShape, failure } from "../support/errors.js";
import { lastSequence } from "../support/event-log.js";
import { useTestServer } from "../support/server.js";
import { createActor } from "../support/world.js";

/**
 * API.md "Optimistic concurrency": every update/remove RPC takes an optional expected_sequence (the details.sequence
 * the caller last read of the object the call changes). When it is set and the object changed since, the call is
 * aborted with reason concurrent_modification, ErrorInfo metadata current_sequence (the sequence now), and writes
 * nothing; the right one succeeds; absent, the last writer wins. One table of the RPCs, each row on one of the
 * protocols in turn (Connect JSON, gRPC, gRPC-web), so every protocol carries the error's metadata.
 */
const t = useTestServer();
const ROTATION: Protocol[] = ["connect-json-http1", "grpc-h2c", "grpc-web-http1"];
let orgId: string;
let serial = 0;
const unique = (prefix: string) => `${prefix}-${++serial}-${Date.now().toString(36)}`;

beforeAll(async () => {
  ({ organizationId: orgId } = await t.clients.client(OrganizationService, "connect-json-http1", { token: t.server.adminToken }).createOrganization({ name: unique("OCC") }));
});

/** A client of `service` acting as the instance's admin in the test organization (or `inOrg`). */
const as = <S extends DescService>(service: S, protocol: Protocol, inOrg = orgId) =>
  t.clients.client(service, protocol, { token: t.server.adminToken, orgId: inOrg });

interface Written {
  details?: { sequence: bigint };
}

/** One object an RPC changes, made fresh for one test. */
interface Subject {
  /** details.sequence of the object as a caller reads it (its Get, or its entry in a list). */
  read(): Promise<bigint>;
  /** The object as read: unchanged by a refused call. */
  snapshot(): Promise<unknown>;
  /** Another caller's change to the same object; rows without one use a sequence the object is not at. */
  touch?(): Promise<unknown>;
  /** The RPC under test; `n` varies the payload of repeatable updates. */
  call(expected: bigint | undefined, n?: number): Promise<Written>;
}

interface Row {
  rpc: string;
  /** The aggregate type of the object's events (ListEvents). */
  aggregateType: string;
  /** Two calls with different payloads would both succeed without an expectation. */
  repeatable?: boolean;
  make(protocol: Protocol): Promise<Subject>;
}

// ---- objects -------------------------------------------------------------------------------------------------------

async function newApplication(protocol: Protocol, inactive = false) {
  const { projectId } = await as(ProjectService, "connect-json-http1").createProject({ name: unique("occ-app-project") });
  const apps = as(ApplicationService, protocol);
  const { appId } = await apps.createOidcApplication({ projectId, name: unique("app"), redirectUris: ["https://app.example.com/cb"], authMethod: OidcAuthMethod.BASIC });
  if (inactive) await apps.deactivateApplication({ projectId, appId });
  const get = async () => (await apps.getApplication({ projectId, appId })).app!;
  return {
    apps,
    ids: { projectId, appId },
    read: async () => (await get()).details!.sequence,
    snapshot: get,
    touch: () => apps.updateApplication({ projectId, appId, name: unique("renamed") }),
  };
}

async function newIdentityProvider(protocol: Protocol) {
  const idps = as(IdentityProviderService, protocol);
  const { idpId } = await idps.createIdentityProvider({ name: unique("idp"), issuer: "https://sso.example.com", clientId: "gatehouse", clientSecret: "s3cret" });
  const get = async () => (await idps.getIdentityProvider({ idpId })).idp!;
  return { idps, idpId, read: async () => (await get()).details!.sequence, snapshot: get, touch: () => idps.updateIdentityProvider({ idpId, name: unique("idp-renamed") }) };
}

async function newOrganization(protocol: Protocol, inactive = false) {
  const orgs = as(OrganizationService, protocol);
  const { organizationId } = await orgs.createOrganization({ name: unique("occ-org") });
  if (inactive) await orgs.deactivateOrganization({ organizationId });
  const get = async () => (await orgs.getOrganization({ organizationId })).organization!;
  // Two changes that leave the state as it was.
  const touch = async () => {
    if (inactive) {
      await orgs.reactivateOrganization({ organizationId });
      await orgs.deactivateOrganization({ organizationId });
    } else {
      await orgs.deactivateOrganization({ organizationId });
      await orgs.reactivateOrganization({ organizationId });
    }
  };
  return { orgs, organizationId, read: async () => (await get()).details!.sequence, snapshot: get, touch };
}

async function newProject(protocol: Protocol, options: { inactive?: boolean; roles?: string[] } = {}) {
  const projects = as(ProjectService, protocol);
  const { projectId } = await projects.createProject({ name: unique("occ-project") });
  for (const roleKey of options.roles ?? []) await projects.addProjectRole({ projectId, roleKey, displayName: roleKey });
  if (options.inactive) await projects.deactivateProject({ projectId });
  const get = async () => (await projects.getProject({ projectId })).project!;
  return { projects, projectId, read: async () => (await get()).details!.sequence, snapshot: get, touch: () => projects.updateProject({ projectId, name: unique("project-renamed") }) };
}

async function newGrant(protocol: Protocol) {
  const { projectId, projects } = await newProject(protocol, { roles: ["r1", "r2"] });
  const { organizationId: grantedOrganizationId } = await as(OrganizationService, "connect-json-http1").createOrganization({ name: unique("occ-granted") });
  const { grantId } = await projects.createProjectGrant({ projectId, grantedOrganizationId, roleKeys: [] });
  const get = async () => (await projects.getProjectGrant({ projectId, grantId })).grant!;
  return {
    projects,
    ids: { projectId, grantId },
    grantedOrganizationId,
    read: async () => (await get()).details!.sequence,
    snapshot: get,
    touch: () => projects.updateProjectGrant({ projectId, grantId, roleKeys: ["r1", "r2"] }),
  };
}

async function newMachineUser(inOrg = orgId) {
  const { userId } = await as(UserService, "connect-json-http1", inOrg).createMachineUser({ userName: unique("occ-user"), name: "OCC" });
  return userId;
}

/** A member of some scope: read from its list, which carries each membership's details. */
function member<T extends { members: { userId: string; details?: { sequence: bigint } }[] }>(list: () => Promise<T>, userId: string) {
  const get = async () => {
    const found = (await list()).members.find((m) => m.userId === userId);
    if (!found) throw new Error(`${userId} is no member`);
    return found;
  };
  return { read: async () => (await get()).details!.sequence, snapshot: get };
}

async function newUser(protocol: Protocol, setup?: "deactivated" | "locked") {
  const users = as(UserService, protocol);
  const userId = await newMachineUser();
  if (setup === "deactivated") await users.deactivateUser({ userId });
  if (setup === "locked") await users.lockUser({ userId });
  const get = async () => (await users.getUser({ userId })).user!;
  // A token issued to the user is an event of the user.
  return { users, userId, read: async () => (await get()).details!.sequence, snapshot: get, touch: () => users.addPersonalAccessToken({ userId }) };
}

/** A human user with a verified email and a password (so no mail is queued for it). */
async function newHuman(protocol: Protocol) {
  const users = as(UserService, protocol);
  const { userId } = await users.createHumanUser({
    userName: unique("occ-human"),
    profile: { firstName: "Oc", lastName: "Cy" },
    email: { email: `${unique("occ")}@example.com`, isEmailVerified: true },
    password: "Occ-Passw0rd!",
  });
  const get = async () => (await users.getUser({ userId })).user!;
  return { users, userId, read: async () => (await get()).details!.sequence, snapshot: get, touch: () => users.addPersonalAccessToken({ userId }) };
}

async function newSmtpConfig(protocol: Protocol) {
  const smtp = as(SmtpService, protocol);
  await smtp.removeSmtpConfig({}).catch(() => undefined);
  const settings = { senderAddress: "noreply@example.com", tls: true, host: "smtp.example.com:587", user: "mailer" };
  await smtp.createSmtpConfig({ ...settings, senderName: "OCC", password: "first-password" });
  const get = async () => (await smtp.getSmtpConfig({})).config!;
  return { smtp, settings, read: async () => (await get()).details!.sequence, snapshot: get, touch: () => smtp.updateSmtpConfig({ ...settings, senderName: unique("sender") }) };
}

// ---- the table -----------------------------------------------------------------------------------------------------

const rows: Row[] = [
  {
    rpc: "UpdateApplication",
    aggregateType: "application",
    repeatable: true,
    make: async (p) => {
      const app = await newApplication(p);
      return { ...app, call: (expectedSequence, n = 1) => app.apps.updateApplication({ ...app.ids, name: unique(`app-${n}`), expectedSequence }) };
    },
  },
  {
    rpc: "DeactivateApplication",
    aggregateType: "application",
    make: async (p) => {
      const app = await newApplication(p);
      return { ...app, call: (expectedSequence) => app.apps.deactivateApplication({ ...app.ids, expectedSequence }) };
    },
  },
  {
    rpc: "ReactivateApplication",
    aggregateType: "application",
    make: async (p) => {
      const app = await newApplication(p, true);
      return { ...app, call: (expectedSequence) => app.apps.reactivateApplication({ ...app.ids, expectedSequence }) };
    },
  },
  {
    rpc: "RemoveApplication",
    aggregateType: "application",
    make: async (p) => {
      const app = await newApplication(p);
      return { ...app, call: (expectedSequence) => app.apps.removeApplication({ ...app.ids, expectedSequence }) };
    },
  },
  {
    rpc: "RegenerateClientSecret",
    aggregateType: "application",
    make: async (p) => {
      const app = await newApplication(p);
      return { ...app, call: (expectedSequence) => app.apps.regenerateClientSecret({ ...app.ids, expectedSequence }) };
    },
  },
  {
    rpc: "UpdateIdentityProvider",
    aggregateType: "idp",
    repeatable: true,
    make: async (p) => {
      const idp = await newIdentityProvider(p);
      return { ...idp, call: (expectedSequence, n = 1) => idp.idps.updateIdentityProvider({ idpId: idp.idpId, name: unique(`idp-${n}`), expectedSequence }) };
    },
  },
  {
    rpc: "RemoveIdentityProvider",
    aggregateType: "idp",
    make: async (p) => {
      const idp = await newIdentityProvider(p);
      return { ...idp, call: (expectedSequence) => idp.idps.removeIdentityProvider({ idpId: idp.idpId, expectedSequence }) };
    },
  },
  {
    rpc: "RemoveInstanceMember",
    aggregateType: "member",
    make: async (p) => {
      const instance = as(InstanceService, p);
      const userId = await newMachineUser();
      await instance.addInstanceMember({ userId, roles: ["IAM_OWNER_VIEWER"] });
      return { ...member(() => instance.listInstanceMembers({ pageSize: 1000 }), userId), call: (expectedSequence) => instance.removeInstanceMember({ userId, expectedSequence }) };
    },
  },
  {
    rpc: "RemoveOrganizationMember",
    aggregateType: "member",
    make: async (p) => {
      const orgs = as(OrganizationService, p);
      const userId = await newMachineUser();
      await orgs.addOrganizationMember({ userId, roles: ["ORG_OWNER_VIEWER"] });
      return { ...member(() => orgs.listOrganizationMembers({ pageSize: 1000 }), userId), call: (expectedSequence) => orgs.removeOrganizationMember({ userId, expectedSequence }) };
    },
  },
  {
    rpc: "DeactivateOrganization",
    aggregateType: "org",
    make: async (p) => {
      const org = await newOrganization(p);
      return { ...org, call: (expectedSequence) => org.orgs.deactivateOrganization({ organizationId: org.organizationId, expectedSequence }) };
    },
  },
  {
    rpc: "ReactivateOrganization",
    aggregateType: "org",
    make: async (p) => {
      const org = await newOrganization(p, true);
      return { ...org, call: (expectedSequence) => org.orgs.reactivateOrganization({ organizationId: org.organizationId, expectedSequence }) };
    },
  },
  {
    rpc: "RemoveProjectGrantMember",
    aggregateType: "member",
    make: async (p) => {
      const grant = await newGrant(p);
      const userId = await newMachineUser(grant.grantedOrganizationId);
      await grant.projects.addProjectGrantMember({ ...grant.ids, userId, roles: ["PROJECT_GRANT_OWNER_VIEWER"] });
      return {
        ...member(() => grant.projects.listProjectGrantMembers({ ...grant.ids, pageSize: 1000 }), userId),
        call: (expectedSequence) => grant.projects.removeProjectGrantMember({ ...grant.ids, userId, expectedSequence }),
      };
    },
  },
  {
    rpc: "UpdateProject",
    aggregateType: "project",
    repeatable: true,
    make: async (p) => {
      const project = await newProject(p);
      return { ...project, call: (expectedSequence, n = 1) => project.projects.updateProject({ projectId: project.projectId, name: unique(`project-${n}`), expectedSequence }) };
    },
  },
  {
    rpc: "RemoveProject",
    aggregateType: "project",
    make: async (p) => {
      const project = await newProject(p);
      return { ...project, call: (expectedSequence) => project.projects.removeProject({ projectId: project.projectId, expectedSequence }) };
    },
  },
  {
    rpc: "DeactivateProject",
    aggregateType: "project",
    make: async (p) => {
      const project = await newProject(p);
      return { ...project, call: (expectedSequence) => project.projects.deactivateProject({ projectId: project.projectId, expectedSequence }) };
    },
  },
  {
    rpc: "ReactivateProject",
    aggregateType: "project",
    make: async (p) => {
      const project = await newProject(p, { inactive: true });
      // An inactive project is read-only, so nobody else can change it meanwhile: no touch.
      return { read: project.read, snapshot: project.snapshot, call: (expectedSequence) => project.projects.reactivateProject({ projectId: project.projectId, expectedSequence }) };
    },
  },
  {
    rpc: "RemoveProjectRole",
    aggregateType: "project",
    make: async (p) => {
      const project = await newProject(p, { roles: ["r1"] });
      return {
        ...project,
        touch: () => project.projects.addProjectRole({ projectId: project.projectId, roleKey: unique("other"), displayName: "Other" }),
        call: (expectedSequence) => project.projects.removeProjectRole({ projectId: project.projectId, roleKey: "r1", expectedSequence }),
      };
    },
  },
  {
    rpc: "RemoveProjectMember",
    aggregateType: "member",
    make: async (p) => {
      const project = await newProject(p);
      const userId = await newMachineUser();
      await project.projects.addProjectMember({ projectId: project.projectId, userId, roles: ["PROJECT_OWNER_VIEWER"] });
      return {
        ...member(() => project.projects.listProjectMembers({ projectId: project.projectId, pageSize: 1000 }), userId),
        call: (expectedSequence) => project.projects.removeProjectMember({ projectId: project.projectId, userId, expectedSequence }),
      };
    },
  },
  {
    rpc: "UpdateProjectGrant",
    aggregateType: "project.grant",
    repeatable: true,
    make: async (p) => {
      const grant = await newGrant(p);
      return { ...grant, call: (expectedSequence, n = 1) => grant.projects.updateProjectGrant({ ...grant.ids, roleKeys: [n === 1 ? "r1" : "r2"], expectedSequence }) };
    },
  },
  {
    rpc: "RemoveProjectGrant",
    aggregateType: "project.grant",
    make: async (p) => {
      const grant = await newGrant(p);
      return { ...grant, call: (expectedSequence) => grant.projects.removeProjectGrant({ ...grant.ids, expectedSequence }) };
    },
  },
  {
    rpc: "UpdateSmtpConfig",
    aggregateType: "smtp",
    repeatable: true,
    make: async (p) => {
      const config = await newSmtpConfig(p);
      return { ...config, call: (expectedSequence, n = 1) => config.smtp.updateSmtpConfig({ ...config.settings, senderName: unique(`sender-${n}`), expectedSequence }) };
    },
  },
  {
    rpc: "SetSmtpPassword",
    aggregateType: "smtp",
    repeatable: true,
    make: async (p) => {
      const config = await newSmtpConfig(p);
      return { ...config, call: (expectedSequence, n = 1) => config.smtp.setSmtpPassword({ password: `password-${n}`, expectedSequence }) };
    },
  },
  {
    rpc: "RemoveSmtpConfig",
    aggregateType: "smtp",
    make: async (p) => {
      const config = await newSmtpConfig(p);
      return { ...config, call: (expectedSequence) => config.smtp.removeSmtpConfig({ expectedSequence }) };
    },
  },
  {
    rpc: "SetEmail",
    aggregateType: "user",
    repeatable: true,
    make: async (p) => {
      const human = await newHuman(p);
      return { ...human, call: (expectedSequence, n = 1) => human.users.setEmail({ userId: human.userId, email: `${unique(`occ-${n}`)}@example.com`, isVerified: true, expectedSequence }) };
    },
  },
  {
    rpc: "SetEmail (unverified: a new code with it)",
    aggregateType: "user",
    repeatable: true,
    make: async (p) => {
      const human = await newHuman(p);
      return {
        ...human,
        call: (expectedSequence, n = 1) => human.users.setEmail({ userId: human.userId, email: `${unique(`occ-${n}`)}@example.com`, isVerified: false, returnCode: true, expectedSequence }),
      };
    },
  },
  {
    rpc: "RemovePersonalAccessToken",
    aggregateType: "user",
    make: async (p) => {
      const user = await newUser(p);
      const { tokenId } = await user.users.addPersonalAccessToken({ userId: user.userId });
      return { ...user, call: (expectedSequence) => user.users.removePersonalAccessToken({ userId: user.userId, tokenId, expectedSequence }) };
    },
  },
  {
    rpc: "DeactivateUser",
    aggregateType: "user",
    make: async (p) => {
      const user = await newUser(p);
      return { ...user, call: (expectedSequence) => user.users.deactivateUser({ userId: user.userId, expectedSequence }) };
    },
  },
  {
    rpc: "ReactivateUser",
    aggregateType: "user",
    make: async (p) => {
      const user = await newUser(p, "deactivated");
      return { ...user, call: (expectedSequence) => user.users.reactivateUser({ userId: user.userId, expectedSequence }) };
    },
  },
  {
    rpc: "LockUser",
    aggregateType: "user",
    make: async (p) => {
      const user = await newUser(p);
      return { ...user, call: (expectedSequence) => user.users.lockUser({ userId: user.userId, expectedSequence }) };
    },
  },
  {
    rpc: "UnlockUser",
    aggregateType: "user",
    make: async (p) => {
      const user = await newUser(p, "locked");
      return { ...user, call: (expectedSequence) => user.users.unlockUser({ userId: user.userId, expectedSequence }) };
    },
  },
  {
    rpc: "RemoveUser",
    aggregateType: "user",
    make: async (p) => {
      const user = await newUser(p);
      return { ...user, call: (expectedSequence) => user.users.removeUser({ userId: user.userId, expectedSequence }) };
    },
  },
];

const table = rows.map((row, index) => ({ ...row, protocol: ROTATION[index % ROTATION.length]! }));

/** The sequence a caller read before another caller changed the object (or, without such a change, one it is not at). */
async function staleSequence(subject: Subject): Promise<bigint> {
  const read = await subject.read();
  if (!subject.touch) return read - 1n;
  await subject.touch();
  expect(await subject.read()).toBeGreaterThan(read);
  return read;
}

/** Events of `aggregateType` appended after `after`. */
async function eventsSince(after: bigint, aggregateType: string) {
  const page = await t.clients.client(EventService, "connect-json-http1", { token: t.server.adminToken }).listEvents({ aggregateType, fromSequence: after + 1n, pageSize: 1000 });
  return page.events;
}

const events = () => t.clients.client(EventService, "connect-json-http1", { token: t.server.adminToken });

describe.each(table)("$rpc over $protocol", (row) => {
  it("a stale expected_sequence is aborted concurrent_modification with the current sequence, and writes nothing", async () => {
    const subject = await row.make(row.protocol);
    const stale = await staleSequence(subject);
    const current = await subject.read();
    const before = await subject.snapshot();
    const logEnd = await lastSequence(events());
    const error = await failure(subject.call(stale));
    expect(error).toMatchObject({ code: Code.Aborted, reason: "concurrent_modification", domain: "gatehouse", metadata: { current_sequence: String(current) } });
    expect(await subject.snapshot()).toEqual(before);
    expect(await eventsSince(logEnd, row.aggregateType)).toEqual([]);
  });

  it("the expected_sequence just read succeeds, and its answer is the object's new sequence", async () => {
    const subject = await row.make(row.protocol);
    const read = await subject.read();
    const logEnd = await lastSequence(events());
    const answer = await subject.call(read);
    expect(answer.details!.sequence).toBeGreaterThan(read);
    const appended = await eventsSince(logEnd, row.aggregateType);
    expect(appended.map((event) => event.sequence)).toContain(answer.details!.sequence);
  });

  it("without expected_sequence the last writer wins: a change made meanwhile does not stop the call", async () => {
    const subject = await row.make(row.protocol);
    await staleSequence(subject);
    const before = await subject.read();
    const answer = await subject.call(undefined);
    expect(answer.details!.sequence).toBeGreaterThan(before);
  });
});

describe.each(table.filter((row) => row.repeatable))("$rpc twice at once with the same expected_sequence", (row) => {
  it("exactly one wins; the other is aborted with the winner's sequence", async () => {
    const subject = await row.make(row.protocol);
    const read = await subject.read();
    const outcomes = await Promise.allSettled([subject.call(read, 1), subject.call(read, 2)]);
    const won = outcomes.flatMap((outcome) => (outcome.status === "fulfilled" ? [outcome.value] : []));
    const lost = outcomes.flatMap((outcome) => (outcome.status === "rejected" ? [errorShape(outcome.reason)] : []));
    expect(won).toHaveLength(1);
    expect(lost).toHaveLength(1);
    expect(lost[0]).toMatchObject({ code: Code.Aborted, reason: "concurrent_modification", metadata: { current_sequence: String(won[0]!.details!.sequence) } });
    expect(await subject.read()).toBe(won[0]!.details!.sequence);
  });
});

describe("an update that changes nothing", () => {
  it("answers the current details when expected_sequence is right, and concurrent_modification when it is stale", async () => {
    const app = await newApplication("connect-json-http1");
    const { name } = await app.snapshot();
    const read = await app.read();
    const same = await app.apps.updateApplication({ ...app.ids, name, expectedSequence: read });
    expect(same.details!.sequence).toBe(read);
    const error = await failure(app.apps.updateApplication({ ...app.ids, name, expectedSequence: read - 1n }));
    expect(error).toMatchObject({ code: Code.Aborted, reason: "concurrent_modification", metadata: { current_sequence: String(read) } });
  });

  it.each([
    ["UpdateProject", "project", async () => {
      const project = await newProject("grpc-h2c");
      const { name } = await project.snapshot();
      return { read: project.read, call: (expectedSequence: bigint) => project.projects.updateProject({ projectId: project.projectId, name, expectedSequence }) };
    }],
    ["UpdateProjectGrant", "project.grant", async () => {
      const grant = await newGrant("grpc-web-http1");
      return { read: grant.read, call: (expectedSequence: bigint) => grant.projects.updateProjectGrant({ ...grant.ids, roleKeys: [], expectedSequence }) };
    }],
    ["UpdateIdentityProvider", "idp", async () => {
      const idp = await newIdentityProvider("connect-json-http1");
      const { name, stylingType, autoRegister } = await idp.snapshot();
      return { read: idp.read, call: (expectedSequence: bigint) => idp.idps.updateIdentityProvider({ idpId: idp.idpId, name, stylingType, autoRegister, expectedSequence }) };
    }],
    ["UpdateSmtpConfig", "smtp", async () => {
      const config = await newSmtpConfig("grpc-h2c");
      return { read: config.read, call: (expectedSequence: bigint) => config.smtp.updateSmtpConfig({ ...config.settings, senderName: "OCC", expectedSequence }) };
    }],
  ])("%s as well (the message names the %s that changed)", async (_rpc, what, make) => {
    const subject = await make();
    const read = await subject.read();
    expect((await subject.call(read)).details!.sequence).toBe(read);
    const error = await failure(subject.call(read + 1n));
    expect(error).toMatchObject({ reason: "concurrent_modification", metadata: { current_sequence: String(read) } });
    expect(error.message).toContain(`the ${what} changed since sequence ${read + 1n}`);
  });
});

describe("the expectation is judged after every permission check", () => {
  it("a caller without rights gets permission_denied, never the object's sequence", async () => {
    const app = await newApplication("connect-json-http1");
    const nobody = await createActor(t.clients, t.server.adminToken, orgId, unique("occ-nobody"));
    const apps = t.clients.client(ApplicationService, "grpc-h2c", { token: nobody.token, orgId });
    const error = await failure(apps.updateApplication({ ...app.ids, name: "x", expectedSequence: 1n }));
    expect(error.code).toBe(Code.PermissionDenied);
    expect(error.metadata).not.toHaveProperty("current_sequence");
  });

  it("a removed object is not_found, whatever sequence is expected", async () => {
    const app = await newApplication("grpc-web-http1");
    const read = await app.read();
    await app.apps.removeApplication(app.ids);
    const error = await failure(app.apps.updateApplication({ ...app.ids, name: "again", expectedSequence: read }));
    expect(error).toMatchObject({ code: Code.NotFound, reason: "application.not_found" });
  });
});
