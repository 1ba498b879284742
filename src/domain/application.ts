import {
  ApiAuthMethod,
  OidcAppType,
  OidcAuthMethod,
  OidcGrantType,
  OidcResponseType,
} from "../../gen/gatehouse/admin/v1/application_pb.js";
import { failedPrecondition } from "./errors.js";

/** Settings of a new OIDC application, with the defaults a caller who sends nothing expects. */
export function oidcDefaults(input: { responseTypes: number[]; grantTypes: number[]; appType: number; authMethod: number }) {
  const appType = input.appType || OidcAppType.WEB;
  // Browser and native apps cannot keep a secret: they are public clients (PKCE) by default.
  const publicByNature = appType === OidcAppType.USER_AGENT || appType === OidcAppType.NATIVE;
  return {
    appType,
    authMethod: input.authMethod || (publicByNature ? OidcAuthMethod.NONE : OidcAuthMethod.BASIC),
    responseTypes: input.responseTypes.length > 0 ? [...new Set(input.responseTypes)] : [OidcResponseType.CODE],
    grantTypes: input.grantTypes.length > 0 ? [...new Set(input.grantTypes)] : [OidcGrantType.AUTHORIZATION_CODE],
  };
}

/** Whether an OIDC client authenticates with a shared secret (which Gatehouse then generates). */
export function oidcUsesSecret(authMethod: number): boolean {
  return authMethod === OidcAuthMethod.BASIC || authMethod === OidcAuthMethod.POST;
}

export function apiDefaultAuthMethod(authMethod: number): number {
  return authMethod || ApiAuthMethod.BASIC;
}

export function apiUsesSecret(authMethod: number): boolean {
  return authMethod === ApiAuthMethod.BASIC;
}

export type ApplicationState = "active" | "inactive";

/** The state a deactivate/reactivate leads to, or the failed_precondition the current state means. */
export function nextApplicationState(current: ApplicationState, change: "deactivate" | "reactivate"): ApplicationState {
  if (change === "deactivate") {
    if (current === "inactive") throw failedPrecondition("application.already_inactive", "the application is inactive already");
    return "inactive";
  }
  if (current !== "inactive") throw failedPrecondition("application.not_inactive", "the application is not inactive");
  return "active";
}

/**
 * Only applications that authenticate with a shared secret have one to regenerate: OIDC BASIC/POST
 * and API BASIC. Public clients, key-based clients and SAML service providers are refused.
 */
export function requireSecretBased(settings: { type: "oidc" | "api" | "saml"; authMethod?: number }): void {
  const usesSecret =
    (settings.type === "oidc" && oidcUsesSecret(settings.authMethod ?? 0)) || (settings.type === "api" && apiUsesSecret(settings.authMethod ?? 0));
  if (!usesSecret) throw failedPrecondition("application.no_secret", "the application does not authenticate with a client secret");
}
