import type { DescService } from "@bufbuild/protobuf";
import type { ConnectRouter } from "@connectrpc/connect";
import { ApplicationService, file_gatehouse_admin_v1_application } from "../gen/gatehouse/admin/v1/application_pb.js";
import { EventService, file_gatehouse_admin_v1_event } from "../gen/gatehouse/admin/v1/event_pb.js";
import { IdentityProviderService, file_gatehouse_admin_v1_identity_provider } from "../gen/gatehouse/admin/v1/identity_provider_pb.js";
import { InstanceService, file_gatehouse_admin_v1_instance } from "../gen/gatehouse/admin/v1/instance_pb.js";
import { OrganizationService, file_gatehouse_admin_v1_organization } from "../gen/gatehouse/admin/v1/organization_pb.js";
import { ProjectService, file_gatehouse_admin_v1_project } from "../gen/gatehouse/admin/v1/project_pb.js";
import { SmtpService, file_gatehouse_admin_v1_smtp } from "../gen/gatehouse/admin/v1/smtp_pb.js";
import { UserService, file_gatehouse_admin_v1_user } from "../gen/gatehouse/admin/v1/user_pb.js";
import { Health, file_grpc_health_v1_health } from "../gen/grpc/health/v1/health_pb.js";
import { ServerReflection as ReflectionV1, file_grpc_reflection_v1_reflection } from "../gen/grpc/reflection/v1/reflection_pb.js";
import { ServerReflection as ReflectionV1alpha, file_grpc_reflection_v1alpha_reflection } from "../gen/grpc/reflection/v1alpha/reflection_pb.js";
import { createApplicationService } from "./api/application/application-service.js";
import { createEventService } from "./api/event/event-service.js";
import { createHealthService, type HealthState } from "./api/health/health-service.js";
import { createIdentityProviderService } from "./api/identity-provider/identity-provider-service.js";
import { createInstanceService } from "./api/instance/instance-service.js";
import { createOrganizationService } from "./api/organization/organization-service.js";
import { createProjectService } from "./api/project/project-service.js";
import { createReflectionService } from "./api/reflection/reflection-service.js";
import { createSmtpService } from "./api/smtp/smtp-service.js";
import { createUserService } from "./api/user/user-service.js";
import type { Deps } from "./context.js";
import type { SmtpClientOptions } from "./notify/smtp-transport.js";

/** Every service Gatehouse serves (tests enumerate their RPCs from this list). */
export const SERVED_SERVICES: readonly DescService[] = [
  InstanceService,
  OrganizationService,
  UserService,
  ProjectService,
  ApplicationService,
  IdentityProviderService,
  SmtpService,
  EventService,
  Health,
  ReflectionV1,
  ReflectionV1alpha,
];

/** The schema reflection serves: every served file and, through their imports, their dependencies. */
const servedFiles = [
  file_gatehouse_admin_v1_instance,
  file_gatehouse_admin_v1_organization,
  file_gatehouse_admin_v1_user,
  file_gatehouse_admin_v1_project,
  file_gatehouse_admin_v1_application,
  file_gatehouse_admin_v1_identity_provider,
  file_gatehouse_admin_v1_smtp,
  file_gatehouse_admin_v1_event,
  file_grpc_health_v1_health,
  file_grpc_reflection_v1_reflection,
  file_grpc_reflection_v1alpha_reflection,
];

export function createRoutes(deps: Deps, health: HealthState, smtpClient: SmtpClientOptions) {
  const serviceNames = SERVED_SERVICES.map((s) => s.typeName);
  const reflection = createReflectionService(servedFiles, serviceNames);
  return (router: ConnectRouter) => {
    router.service(InstanceService, createInstanceService(deps));
    router.service(OrganizationService, createOrganizationService(deps));
    router.service(UserService, createUserService(deps));
    router.service(ProjectService, createProjectService(deps));
    router.service(ApplicationService, createApplicationService(deps));
    router.service(IdentityProviderService, createIdentityProviderService(deps));
    router.service(SmtpService, createSmtpService(deps, smtpClient));
    router.service(EventService, createEventService(deps));
    router.service(Health, createHealthService(health, serviceNames));
    router.service(ReflectionV1, reflection);
    // v1alpha's messages are v1's under another package name; the implementation returns plain
    // objects, which the router builds into the v1alpha types.
    router.service(ReflectionV1alpha, reflection as never);
  };
}
