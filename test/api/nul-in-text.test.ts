import { describe, expect, it } from "vitest";
import { OrganizationService } from "../../gen/gatehouse/admin/v1/organization_pb.js";
import { ProjectService } from "../../gen/gatehouse/admin/v1/project_pb.js";
import { PROTOCOLS } from "../support/clients.js";
import { failure } from "../support/errors.js";
import { useTestServer } from "../support/server.js";

// API.md "Input" ("nothing a client sends yields internal") and src/interceptors/validation.ts: a text holding
// U+0000 (NUL) is refused as the caller's mistake — invalid_argument request.invalid naming the field, rule
// string.no_nul — on every protocol and for any field, before anything is written (PostgreSQL's text cannot hold it).
const t = useTestServer();
const INVALID_ARGUMENT = 3;

describe("a text with U+0000", () => {
  it.each(PROTOCOLS)("CreateOrganization's name over %s: invalid_argument, the field named, nothing created", async (protocol) => {
    const orgs = t.clients.client(OrganizationService, protocol, { token: t.server.adminToken });
    const name = `nul-${protocol}-\u0000-org`;
    const error = await failure(orgs.createOrganization({ name }));
    expect(error.code).toBe(INVALID_ARGUMENT);
    expect(error.reason).toBe("request.invalid");
    expect(error.fields).toEqual(["name"]);
    expect(error.rules).toEqual(["string.no_nul"]);
    const listed = await orgs.listOrganizations({ pageSize: 1000 });
    expect(listed.organizations.map((org) => org.name)).not.toContain(name);
  });

  it("a project role's display name: the field named, nothing created", async () => {
    const projects = t.clients.client(ProjectService, "connect-json-http1", { token: t.server.adminToken });
    const { projectId } = await projects.createProject({ name: `nul-roles-${Date.now()}` });
    const error = await failure(projects.addProjectRole({ projectId, roleKey: "viewer", displayName: "View\u0000er" }));
    expect(error.reason).toBe("request.invalid");
    expect(error.fields).toEqual(["display_name"]);
    expect((await projects.listProjectRoles({ projectId })).roles).toEqual([]);
  });
});
