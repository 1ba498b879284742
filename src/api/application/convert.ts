import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { type Application, ApplicationSchema, ApplicationState } from "../../../gen/gatehouse/admin/v1/application_pb.js";
import type { Details } from "../../events/details.js";
import type { ApplicationRow } from "../../store/rows.js";
import { toDetailsMessage } from "../convert.js";

function configOf(app: ApplicationRow): MessageInitShape<typeof ApplicationSchema>["config"] {
  const settings = app.settings;
  // Stryker disable next-line StringLiteral: only a SAML application has no client id, and its config carries none
  const clientId = app.clientId ?? "";
  switch (settings.type) {
    case "oidc":
      return {
        case: "oidc",
        value: {
          clientId,
          redirectUris: settings.redirectUris,
          responseTypes: settings.responseTypes,
          grantTypes: settings.grantTypes,
          appType: settings.appType,
          authMethod: settings.authMethod,
        },
      };
    case "api":
      return { case: "api", value: { clientId, authMethod: settings.authMethod } };
    case "saml":
      return {
        case: "saml",
        value: { entityId: settings.entityId, metadataXml: settings.metadataXml, metadataUrl: settings.metadataUrl },
      };
  }
}

const states = { active: ApplicationState.ACTIVE, inactive: ApplicationState.INACTIVE } as const;

/** The stored state a list filter names; UNSPECIFIED means every state. */
export function applicationStateFilter(state: ApplicationState): ApplicationRow["state"] | undefined {
  if (state === ApplicationState.ACTIVE) return "active";
  if (state === ApplicationState.INACTIVE) return "inactive";
  return undefined;
}

/** A stored application → the `Application` message; the client secret hash is never copied. */
export function toApplicationMessage(app: ApplicationRow, details: Details): Application {
  return create(ApplicationSchema, {
    appId: app.id,
    projectId: app.projectId,
    name: app.name,
    state: states[app.state],
    config: configOf(app),
    details: toDetailsMessage(details),
  });
}
