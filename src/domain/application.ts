import {
  ApiAuthMethod,
  OidcAppType,
  OidcAuthMethod,
  OidcGrantType,
  OidcResponseType,
} from "../../gen/gatehouse/admin/v1/application_pb.js";

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
