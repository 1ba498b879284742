import type { ServiceImpl } from "@connectrpc/connect";
import type { ApplicationService } from "../../../gen/gatehouse/admin/v1/application_pb.js";
import {
  createApiApplication,
  createOidcApplication,
  createSamlApplication,
  updateApplication,
} from "../../commands/application.js";
import { changeApplicationState, regenerateClientSecret, removeApplication } from "../../commands/application-lifecycle.js";
import type { Deps } from "../../context.js";
import { getApplication, listApplications } from "../../queries/application.js";
import { callerOf } from "../caller.js";
import { listDetails, toDetailsMessage } from "../convert.js";
import { applicationStateFilter, toApplicationMessage } from "./convert.js";

export function createApplicationService(deps: Deps): ServiceImpl<typeof ApplicationService> {
  return {
    async createOidcApplication(request, context) {
      const result = await createOidcApplication(deps, callerOf(context), request);
      return { appId: result.appId, clientId: result.clientId, clientSecret: result.clientSecret, details: toDetailsMessage(result.details) };
    },
    async createApiApplication(request, context) {
      const result = await createApiApplication(deps, callerOf(context), request);
      return { appId: result.appId, clientId: result.clientId, clientSecret: result.clientSecret, details: toDetailsMessage(result.details) };
    },
    async createSamlApplication(request, context) {
      const metadata =
        request.metadata.case === "metadataXml"
          ? { xml: request.metadata.value }
          : {
              // Stryker disable next-line StringLiteral: the metadata oneof is required (buf.validate), so a request that gets here has the URL when it has no XML
              url: request.metadata.value ?? "",
            };
      const { appId, details } = await createSamlApplication(deps, callerOf(context), { projectId: request.projectId, name: request.name, metadata });
      return { appId, details: toDetailsMessage(details) };
    },
    async getApplication(request, context) {
      const { app, details } = await getApplication(deps, callerOf(context), request);
      return { app: toApplicationMessage(app, details) };
    },
    async listApplications(request, context) {
      const { projectId, pageSize, pageToken } = request;
      const query = { projectId, pageSize, pageToken, state: applicationStateFilter(request.state) };
      const page = await listApplications(deps, callerOf(context), query);
      return {
        details: listDetails(page),
        apps: page.apps.map(({ row, details }) => toApplicationMessage(row, details)),
      };
    },
    async updateApplication(request, context) {
      const { details } = await updateApplication(deps, callerOf(context), request);
      return { details: toDetailsMessage(details) };
    },
    async deactivateApplication(request, context) {
      const { details } = await changeApplicationState(deps, callerOf(context), request, "deactivate");
      return { details: toDetailsMessage(details) };
    },
    async reactivateApplication(request, context) {
      const { details } = await changeApplicationState(deps, callerOf(context), request, "reactivate");
      return { details: toDetailsMessage(details) };
    },
    async removeApplication(request, context) {
      const { details } = await removeApplication(deps, callerOf(context), request);
      return { details: toDetailsMessage(details) };
    },
    async regenerateClientSecret(request, context) {
      const { clientSecret, details } = await regenerateClientSecret(deps, callerOf(context), request);
      return { clientSecret, details: toDetailsMessage(details) };
    },
  };
}
