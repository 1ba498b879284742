import { selectProject } from "../access/select-project.js";
import type { Caller, Deps } from "../context.js";
import { apiDefaultAuthMethod, apiUsesSecret, oidcDefaults, oidcUsesSecret } from "../domain/application.js";
import { notFound } from "../domain/errors.js";
import { uniquenessKey } from "../domain/names.js";
import { parseSamlEntityId } from "../domain/saml-metadata.js";
import { checkHttpsUrl, checkRedirectUris } from "../domain/urls.js";
import { detailsOfChange, detailsOfCreate } from "../events/details.js";
import { EventType } from "../events/types.js";
import { spanOf } from "../queries/details.js";
import type { ApplicationSettings } from "../store/rows.js";
import { randomSecret, sha256Hex } from "../support/crypto.js";
import { commitAs, detailsOfNoChange, type Expected, expectationOf } from "./commit-as.js";

interface NewApplication {
  projectId: string;
  name: string;
  /**
   * Checks the type-specific input and returns the settings to store and the credentials to make. Called only after the
   * caller's permission on the project is established: validating settings (parsing SAML metadata
   * most of all) is work a caller without rights must not be able to make the server do.
   */
  settingsOf: () => {
    settings: ApplicationSettings;
    /** Whether to generate a client id, and a client secret (shown once, stored as SHA-256). */
    credentials: "none" | "client_id" | "client_id_and_secret";
  };
}

/** Shared by the three create RPCs: the rules differ only in the settings they validate. */
async function createApplication(deps: Deps, caller: Caller, input: NewApplication) {
  const { organization, project } = await selectProject(deps, caller, input.projectId, "project.app.write");
  const { settings, credentials } = input.settingsOf();
  const appId = deps.ids.next();
  const clientId = credentials === "none" ? null : deps.ids.next();
  const clientSecret = credentials === "client_id_and_secret" ? randomSecret(32) : undefined;
  const events = await commitAs(deps, caller, {
    writes: [
      {
        kind: "application.insert",
        row: {
          id: appId,
          projectId: project.id,
          state: "active",
          name: input.name,
          nameKey: uniquenessKey(input.name),
          type: settings.type,
          clientId,
          clientSecretHash: clientSecret ? sha256Hex(clientSecret) : null,
          settings,
        },
      },
    ],
    events: [
      {
        aggregateType: "application",
        aggregateId: appId,
        type: EventType.applicationAdded,
        // Settings are public configuration; the secret is never part of the event.
        payload: { projectId: project.id, name: input.name, clientId, settings },
        resourceOwner: organization.id,
      },
    ],
  });
  // Stryker disable next-line StringLiteral: only a SAML application has no client id, and createSamlApplication passes none on (its response has no client id field)
  return { appId, clientId: clientId ?? "", clientSecret, details: detailsOfCreate(events) };
}

export async function createOidcApplication(
  deps: Deps,
  caller: Caller,
  input: { projectId: string; name: string; redirectUris: string[]; responseTypes: number[]; grantTypes: number[]; appType: number; authMethod: number },
) {
  return createApplication(deps, caller, {
    projectId: input.projectId,
    name: input.name,
    settingsOf: () => {
      checkRedirectUris(input.redirectUris);
      const defaults = oidcDefaults(input);
      return {
        settings: { type: "oidc", redirectUris: input.redirectUris, ...defaults },
        credentials: credentialsOf(oidcUsesSecret(defaults.authMethod)),
      };
    },
  });
}

export async function createApiApplication(deps: Deps, caller: Caller, input: { projectId: string; name: string; authMethod: number }) {
  const authMethod = apiDefaultAuthMethod(input.authMethod);
  return createApplication(deps, caller, {
    projectId: input.projectId,
    name: input.name,
    settingsOf: () => ({ settings: { type: "api", authMethod }, credentials: credentialsOf(apiUsesSecret(authMethod)) }),
  });
}

/** What a client of an OIDC or API application gets: always a client id, a secret when its auth method uses one. */
const credentialsOf = (usesSecret: boolean) =>
  usesSecret
    ? ("client_id_and_secret" as const)
    : // Stryker disable next-line StringLiteral: only "none" and "client_id_and_secret" are compared, so any other text is this same "client id only"
      ("client_id" as const);

/** The metadata XML is parsed (bounded, see saml-metadata.ts) only once the caller may write apps in the project. */
export async function createSamlApplication(
  deps: Deps,
  caller: Caller,
  input: { projectId: string; name: string; metadata: { xml: string } | { url: string } },
) {
  const { metadata } = input;
  const { appId, details } = await createApplication(deps, caller, {
    projectId: input.projectId,
    name: input.name,
    settingsOf: () => {
      if ("xml" in metadata) {
        return { settings: { type: "saml", entityId: parseSamlEntityId(metadata.xml), metadataXml: metadata.xml, metadataUrl: "" }, credentials: "none" };
      }
      checkHttpsUrl(metadata.url, "metadata_url", "application.saml_metadata_invalid");
      // The entity id becomes known when the metadata is fetched; Gatehouse does not fetch at creation.
      return { settings: { type: "saml", entityId: "", metadataXml: "", metadataUrl: metadata.url }, credentials: "none" };
    },
  });
  return { appId, details };
}

/**
 * SPEC 4.5: changes only the name; OIDC, API and SAML settings are not touched. Renaming to the
 * current name changes nothing: no event, the current details.
 */
export async function updateApplication(deps: Deps, caller: Caller, input: { projectId: string; appId: string; name: string } & Expected) {
  const { organization, project } = await selectProject(deps, caller, input.projectId, "project.app.write");
  const app = await deps.store.findApplicationById(input.appId);
  if (!app || app.projectId !== project.id) {
    throw notFound("application.not_found", "the application does not exist in this project", { appId: input.appId });
  }
  const expect = expectationOf("application", app.id, input);
  if (app.name === input.name) return { details: await detailsOfNoChange(deps, { type: "application", id: app.id }, expect) };
  const span = await spanOf(deps.store, "application", app.id);
  const events = await commitAs(deps, caller, {
    expect,
    writes: [{ kind: "application.rename", id: app.id, name: input.name, nameKey: uniquenessKey(input.name) }],
    events: [
      { aggregateType: "application", aggregateId: app.id, type: EventType.applicationChanged, payload: { name: input.name }, resourceOwner: organization.id },
    ],
  });
  return { details: detailsOfChange(events, span.first) };
}
