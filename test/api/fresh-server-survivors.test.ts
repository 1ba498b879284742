import { fromBinary } from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";
import { describe, expect, it } from "vitest";
import { ApplicationService, OidcAuthMethod } from "../../gen/gatehouse/admin/v1/application_pb.js";
import type { Details } from "../../gen/gatehouse/admin/v1/details_pb.js";
import { IdentityProviderService } from "../../gen/gatehouse/admin/v1/identity_provider_pb.js";
import { OrganizationService } from "../../gen/gatehouse/admin/v1/organization_pb.js";
import { ProjectService } from "../../gen/gatehouse/admin/v1/project_pb.js";
import { UserService } from "../../gen/gatehouse/admin/v1/user_pb.js";
import { ServerReflection } from "../../gen/grpc/reflection/v1/reflection_pb.js";
import { withFreshServer } from "../support/server.js";

// The services are built when a server starts. Each test here starts its own server inside the test, so that
// building (which a file's shared server does in beforeAll) is part of what the test checks: a server that has just
// started serves every RPC of these services, and every write answers with the details of its change.


describe("a server that has just started", () => {
  it("serves every project write, each answering with the details of its own change in the project's organization", async () => {
    await withFreshServer(async (server, clients) => {
      const admin = { token: server.adminToken };
      const orgs = clients.client(OrganizationService, "connect-json-http1", admin);
      const { organizationId: owner } = await orgs.createOrganization({ name: "Fresh owner" });
      const { organizationId: grantee } = await orgs.createOrganization({ name: "Fresh grantee" });
      const { userId: member } = await clients.client(UserService, "connect-json-http1", { ...admin, orgId: owner }).createMachineUser({ userName: "fresh-member", name: "Member" });
      const { userId: grantMember } = await clients
        .client(UserService, "connect-json-http1", { ...admin, orgId: grantee })
        .createMachineUser({ userName: "fresh-grant-member", name: "Grant member" });

      const projects = clients.client(ProjectService, "grpc-h2c", { ...admin, orgId: owner });
      const { projectId } = await projects.createProject({ name: "Fresh project" });
      const sequences: bigint[] = [];
      const change = ({ details }: { details?: Details }) => {
        expect(details?.resourceOwner).toBe(owner);
        sequences.push(details!.sequence);
      };
      change(await projects.updateProject({ projectId, name: "Fresh project (renamed)" }));
      change(await projects.deactivateProject({ projectId }));
      change(await projects.reactivateProject({ projectId }));
      change(await projects.addProjectRole({ projectId, roleKey: "reader", displayName: "Reader" }));
      change(await projects.addProjectMember({ projectId, userId: member, roles: ["PROJECT_OWNER"] }));
      change(await projects.removeProjectMember({ projectId, userId: member }));
      const { grantId } = await projects.createProjectGrant({ projectId, grantedOrganizationId: grantee, roleKeys: ["reader"] });
      change(await projects.updateProjectGrant({ projectId, grantId, roleKeys: [] }));
      change(await projects.addProjectGrantMember({ projectId, grantId, userId: grantMember, roles: ["PROJECT_GRANT_OWNER"] }));
      change(await projects.removeProjectGrantMember({ projectId, grantId, userId: grantMember }));
      change(await projects.removeProjectGrant({ projectId, grantId }));
      change(await projects.removeProjectRole({ projectId, roleKey: "reader" }));
      change(await projects.removeProject({ projectId }));
      // Each write is a change of its own, in the order made.
      expect(sequences.every((sequence, i) => i === 0 || sequence > sequences[i - 1]!)).toBe(true);
      expect(sequences).toHaveLength(12);
    });
  });

  it("serves the application and identity provider RPCs", async () => {
    await withFreshServer(async (server, clients) => {
      const admin = { token: server.adminToken };
      const { organizationId: orgId } = await clients.client(OrganizationService, "connect-json-http1", admin).createOrganization({ name: "Fresh apps" });
      const { projectId } = await clients.client(ProjectService, "connect-json-http1", { ...admin, orgId }).createProject({ name: "Fresh apps project" });
      const apps = clients.client(ApplicationService, "grpc-h2c", { ...admin, orgId });
      const created = await apps.createOidcApplication({ projectId, name: "Fresh OIDC", redirectUris: ["https://fresh.example.com/cb"], authMethod: OidcAuthMethod.BASIC });
      expect(created.details?.resourceOwner).toBe(orgId);
      expect((await apps.getApplication({ projectId, appId: created.appId })).app).toMatchObject({ appId: created.appId, name: "Fresh OIDC" });

      const idps = clients.client(IdentityProviderService, "grpc-h2c", { ...admin, orgId });
      const { idpId, details } = await idps.createIdentityProvider({ name: "Fresh SSO", issuer: "https://fresh-sso.example.com", clientId: "fresh", clientSecret: "fresh-secret" });
      expect(details?.resourceOwner).toBe(orgId);
      expect((await idps.getIdentityProvider({ idpId })).idp).toMatchObject({ idpId, name: "Fresh SSO", issuer: "https://fresh-sso.example.com" });
    });
  });

  it("answers reflection: its services, and a symbol's file first with each import once", async () => {
    await withFreshServer(async (_server, clients) => {
      const reflection = clients.client(ServerReflection, "grpc-h2c");
      async function* requests() {
        yield { host: "", messageRequest: { case: "listServices", value: "" } } as never;
        yield { host: "", messageRequest: { case: "fileContainingSymbol", value: "gatehouse.admin.v1.ProjectService" } } as never;
      }
      const answers = [];
      for await (const response of reflection.serverReflectionInfo(requests())) answers.push(response.messageResponse);
      const [services, file] = answers;
      expect(services?.case === "listServicesResponse" && services.value.service.map((s) => s.name)).toContain("gatehouse.admin.v1.ProjectService");
      expect(file?.case).toBe("fileDescriptorResponse");
      const names = file?.case === "fileDescriptorResponse" ? file.value.fileDescriptorProto.map((bytes) => fromBinary(FileDescriptorProtoSchema, bytes).name) : [];
      expect(names[0]).toBe("gatehouse/admin/v1/project.proto");
      expect(names).toEqual(expect.arrayContaining(["gatehouse/admin/v1/details.proto", "google/protobuf/descriptor.proto"]));
      expect(new Set(names).size).toBe(names.length);
    });
  });
});
