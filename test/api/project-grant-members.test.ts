import { Code } from "@connectrpc/connect";
import { beforeAll, describe, expect, it } from "vitest";
import { EventService } from "../../gen/gatehouse/admin/v1/event_pb.js";
import { ProjectService } from "../../gen/gatehouse/admin/v1/project_pb.js";
import { PROTOCOLS } from "../support/clients.js";
import { failure } from "../support/errors.js";
import { useTestServer } from "../support/server.js";
import { buildWorld, createActor, type World } from "../support/world.js";

const t = useTestServer();
let world: World;

beforeAll(async () => {
  world = await buildWorld(t.clients, t.server.adminToken, "members");
});

let userCounter = 0;
const eventCount = async () =>
  (await t.clients.client(EventService, "connect-json-http1", { token: t.server.adminToken }).listEvents({})).details!.totalResult;

describe.each(PROTOCOLS)("AddProjectGrantMember (SPEC 4.4) over %s", (protocol) => {
  const projects = () => t.clients.client(ProjectService, protocol, { token: t.server.adminToken, orgId: world.orgA });
  const newUser = (name: string) => createActor(t.clients, t.server.adminToken, world.orgB, `${name}-${protocol}-${++userCounter}`);

  it("adds the user with the given roles, appends project.grant.member.added, and details match it", async () => {
    const user = await newUser("granted");
    const { details } = await projects().addProjectGrantMember({ projectId: world.p1, grantId: world.g1, userId: user.userId, roles: ["PROJECT_GRANT_OWNER_VIEWER"] });
    expect(details?.resourceOwner).toBe(world.orgA);
    expect(details?.creationDate).toEqual(details?.changeDate);
    const { members } = await projects().listProjectGrantMembers({ projectId: world.p1, grantId: world.g1 });
    expect(members.find((m) => m.userId === user.userId)?.roles).toEqual(["PROJECT_GRANT_OWNER_VIEWER"]);
    const { events } = await t.clients.client(EventService, protocol, { token: t.server.adminToken }).listEvents({ fromSequence: details!.sequence });
    expect(events[0]).toMatchObject({ sequence: details!.sequence, eventType: "project.grant.member.added", resourceOwner: world.orgA });
  });

  it("allows no roles: a member without rights", async () => {
    const user = await newUser("rightless");
    await projects().addProjectGrantMember({ projectId: world.p1, grantId: world.g1, userId: user.userId });
    const { members } = await projects().listProjectGrantMembers({ projectId: world.p1, grantId: world.g1 });
    expect(members.find((m) => m.userId === user.userId)?.roles).toEqual([]);
    const asMember = t.clients.client(ProjectService, protocol, { token: user.token, orgId: world.orgA });
    expect((await failure(asMember.getProjectGrant({ projectId: world.p1, grantId: world.g1 }))).code).toBe(Code.PermissionDenied);
  });

  it("rejects roles that are not project grant roles, naming each bad one, and writes nothing", async () => {
    const user = await newUser("badroles");
    const before = await eventCount();
    const error = await failure(
      projects().addProjectGrantMember({ projectId: world.p1, grantId: world.g1, userId: user.userId, roles: ["PROJECT_GRANT_OWNER", "ORG_OWNER", "reader"] }),
    );
    expect(error).toMatchObject({ code: Code.InvalidArgument, reason: "member.role_invalid", fields: ["roles[1]", "roles[2]"], metadata: { roles: "ORG_OWNER,reader" } });
    expect(await eventCount()).toBe(before);
  });

  it("answers already_exists for the same user twice on the same grant", async () => {
    const user = await newUser("twice");
    await projects().addProjectGrantMember({ projectId: world.p1, grantId: world.g1, userId: user.userId });
    const error = await failure(projects().addProjectGrantMember({ projectId: world.p1, grantId: world.g1, userId: user.userId, roles: ["PROJECT_GRANT_OWNER"] }));
    expect(error).toMatchObject({ code: Code.AlreadyExists, reason: "member.already_exists" });
    // The same user on another grant is another membership.
    await projects().addProjectGrantMember({ projectId: world.p1, grantId: world.g2, userId: user.userId });
  });

  it.each([
    ["an unknown project", (w: World) => ({ projectId: "no-such-project", grantId: w.g1 }), Code.NotFound, "project.not_found"],
    ["a grant of another project", (w: World) => ({ projectId: w.p2, grantId: w.g1 }), Code.NotFound, "project.grant.not_found"],
    ["an unknown grant", (w: World) => ({ projectId: w.p1, grantId: "no-such-grant" }), Code.NotFound, "project.grant.not_found"],
  ])("answers %s with not_found", async (_name, ids, code, reason) => {
    const user = await newUser("not-found");
    const error = await failure(projects().addProjectGrantMember({ ...ids(world), userId: user.userId }));
    expect(error).toMatchObject({ code, reason });
  });

  it("answers an unknown user with failed_precondition", async () => {
    const error = await failure(projects().addProjectGrantMember({ projectId: world.p1, grantId: world.g1, userId: "no-such-user" }));
    expect(error).toMatchObject({ code: Code.FailedPrecondition, reason: "user.not_found" });
  });

  it("checks SPEC section 8 limits: user_id 1..200, and the ids", async () => {
    const check = async (request: { projectId: string; grantId: string; userId: string }, field: string, rule: string) =>
      expect(await failure(projects().addProjectGrantMember(request))).toMatchObject({ code: Code.InvalidArgument, reason: "request.invalid", fields: [field], rules: [rule] });
    await check({ projectId: world.p1, grantId: world.g1, userId: "" }, "user_id", "string.min_len");
    await check({ projectId: world.p1, grantId: world.g1, userId: "u".repeat(201) }, "user_id", "string.max_len");
    await check({ projectId: "p".repeat(201), grantId: world.g1, userId: "u" }, "project_id", "string.max_len");
    await check({ projectId: world.p1, grantId: "g".repeat(201), userId: "u" }, "grant_id", "string.max_len");
    // 200 characters pass validation and reach the rules: such a user does not exist.
    const error = await failure(projects().addProjectGrantMember({ projectId: world.p1, grantId: world.g1, userId: "u".repeat(200) }));
    expect(error).toMatchObject({ code: Code.FailedPrecondition, reason: "user.not_found" });
  });
});

describe("projects and grants", () => {
  const projects = () => t.clients.client(ProjectService, "connect-json-http1", { token: t.server.adminToken, orgId: world.orgA });

  it("reads a project with its roles, and a grant with its role keys", async () => {
    const { project } = await projects().getProject({ projectId: world.p1 });
    expect(project?.roles.map((r) => r.roleKey)).toEqual(["reader"]);
    const { grant } = await projects().getProjectGrant({ projectId: world.p1, grantId: world.g1 });
    expect(grant).toMatchObject({ projectId: world.p1, grantedOrganizationId: world.orgB, roleKeys: ["reader"] });
  });

  it("keeps project names unique per organization, case-insensitively", async () => {
    expect(await failure(projects().createProject({ name: "p1" }))).toMatchObject({ code: Code.AlreadyExists, reason: "project.already_exists" });
    const other = t.clients.client(ProjectService, "connect-json-http1", { token: t.server.adminToken, orgId: world.orgB });
    await other.createProject({ name: "P1" });
  });

  it("grants only the project's own role keys, to another existing organization, once", async () => {
    expect(await failure(projects().createProjectGrant({ projectId: world.p1, grantedOrganizationId: world.orgB, roleKeys: ["reader"] }))).toMatchObject({
      code: Code.AlreadyExists,
      reason: "project.grant.already_exists",
    });
    expect(await failure(projects().createProjectGrant({ projectId: world.p2, grantedOrganizationId: world.orgB, roleKeys: ["admin"] }))).toMatchObject({
      code: Code.FailedPrecondition,
      reason: "project.role.not_found",
    });
    expect(await failure(projects().createProjectGrant({ projectId: world.p2, grantedOrganizationId: "nope", roleKeys: [] }))).toMatchObject({
      code: Code.FailedPrecondition,
      reason: "organization.not_found",
    });
    expect(await failure(projects().createProjectGrant({ projectId: world.p2, grantedOrganizationId: world.orgA, roleKeys: [] }))).toMatchObject({
      code: Code.InvalidArgument,
      reason: "project.grant.own_organization",
    });
  });

  it("removes a member, and answers not_found for one that is not there", async () => {
    const user = await createActor(t.clients, t.server.adminToken, world.orgB, "removable");
    await projects().addProjectGrantMember({ projectId: world.p1, grantId: world.g1, userId: user.userId });
    await projects().removeProjectGrantMember({ projectId: world.p1, grantId: world.g1, userId: user.userId });
    expect(await failure(projects().removeProjectGrantMember({ projectId: world.p1, grantId: world.g1, userId: user.userId }))).toMatchObject({
      code: Code.NotFound,
      reason: "member.not_found",
    });
  });
});
