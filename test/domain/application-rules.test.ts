import { describe, expect, it } from "vitest";
import { ApiAuthMethod, OidcAppType, OidcAuthMethod, OidcGrantType, OidcResponseType } from "../../gen/gatehouse/admin/v1/application_pb.js";
import {
  apiDefaultAuthMethod,
  apiUsesSecret,
  nextApplicationState,
  oidcDefaults,
  oidcUsesSecret,
  requireSecretBased,
} from "../../src/domain/application.js";
import { DomainError } from "../../src/domain/errors.js";
import { checkHttpsUrl, checkRedirectUris, isLoopbackHost, redirectUriProblem } from "../../src/domain/urls.js";
import { thrownBy } from "../support/thrown.js";

const refusal = (action: () => unknown): DomainError => thrownBy(DomainError, action);

describe("OIDC application defaults", () => {
  const nothing = { responseTypes: [], grantTypes: [], appType: 0, authMethod: 0 };

  it("a caller who sends nothing gets a web app with a client secret, the code flow and the authorization code grant", () => {
    expect(oidcDefaults(nothing)).toEqual({
      appType: OidcAppType.WEB,
      authMethod: OidcAuthMethod.BASIC,
      responseTypes: [OidcResponseType.CODE],
      grantTypes: [OidcGrantType.AUTHORIZATION_CODE],
    });
  });

  it("browser and native apps cannot keep a secret: they default to no client authentication (PKCE)", () => {
    for (const appType of [OidcAppType.USER_AGENT, OidcAppType.NATIVE]) expect(oidcDefaults({ ...nothing, appType }).authMethod).toBe(OidcAuthMethod.NONE);
    expect(oidcDefaults({ ...nothing, appType: OidcAppType.NATIVE, authMethod: OidcAuthMethod.POST }).authMethod).toBe(OidcAuthMethod.POST);
  });

  it("keeps the given response and grant types, each once", () => {
    const given = oidcDefaults({
      ...nothing,
      responseTypes: [OidcResponseType.ID_TOKEN, OidcResponseType.CODE, OidcResponseType.ID_TOKEN],
      grantTypes: [OidcGrantType.REFRESH_TOKEN, OidcGrantType.AUTHORIZATION_CODE, OidcGrantType.REFRESH_TOKEN],
    });
    expect(given.responseTypes).toEqual([OidcResponseType.ID_TOKEN, OidcResponseType.CODE]);
    expect(given.grantTypes).toEqual([OidcGrantType.REFRESH_TOKEN, OidcGrantType.AUTHORIZATION_CODE]);
  });

  it("a client secret is used by OIDC BASIC and POST and by API BASIC (the API default) only", () => {
    expect([OidcAuthMethod.BASIC, OidcAuthMethod.POST, OidcAuthMethod.NONE, OidcAuthMethod.PRIVATE_KEY_JWT].map(oidcUsesSecret)).toEqual([true, true, false, false]);
    expect(apiDefaultAuthMethod(0)).toBe(ApiAuthMethod.BASIC);
    expect(apiDefaultAuthMethod(ApiAuthMethod.PRIVATE_KEY_JWT)).toBe(ApiAuthMethod.PRIVATE_KEY_JWT);
    expect([ApiAuthMethod.BASIC, ApiAuthMethod.PRIVATE_KEY_JWT].map(apiUsesSecret)).toEqual([true, false]);
  });
});

describe("application state and secrets", () => {
  it("deactivates an active application and reactivates an inactive one", () => {
    expect(nextApplicationState("active", "deactivate")).toBe("inactive");
    expect(nextApplicationState("inactive", "reactivate")).toBe("active");
  });

  it.each([
    ["inactive", "deactivate", "application.already_inactive"],
    ["active", "reactivate", "application.not_inactive"],
  ] as const)("a %s application cannot %s: failed_precondition %s", (current, change, reason) => {
    const error = refusal(() => nextApplicationState(current, change));
    expect(error).toMatchObject({ kind: "failed_precondition", reason });
    expect(error.message).toMatch(/inactive/);
  });

  it("only clients that authenticate with a secret can have it regenerated", () => {
    expect(() => requireSecretBased({ type: "oidc", authMethod: OidcAuthMethod.BASIC })).not.toThrow();
    expect(() => requireSecretBased({ type: "oidc", authMethod: OidcAuthMethod.POST })).not.toThrow();
    expect(() => requireSecretBased({ type: "api", authMethod: ApiAuthMethod.BASIC })).not.toThrow();
    for (const settings of [
      { type: "oidc", authMethod: OidcAuthMethod.NONE },
      { type: "oidc", authMethod: OidcAuthMethod.PRIVATE_KEY_JWT },
      { type: "oidc" },
      { type: "api", authMethod: ApiAuthMethod.PRIVATE_KEY_JWT },
      { type: "api" },
      { type: "saml" },
      // A SAML service provider has no client secret whatever number sits in its settings.
      { type: "saml", authMethod: 1 },
    ] as const) {
      const error = refusal(() => requireSecretBased(settings));
      expect(error).toMatchObject({ kind: "failed_precondition", reason: "application.no_secret" });
      expect(error.message).toMatch(/secret/);
    }
  });
});

describe("loopback hosts", () => {
  it.each(["localhost", "LOCALHOST", "app.localhost", "127.0.0.1", "127.255.3.4", "::1", "[::1]"])("%s is loopback", (host) => {
    expect(isLoopbackHost(host)).toBe(true);
  });
  it.each(["example.com", "localhost.example.com", "128.0.0.1", "10.0.0.1", "127.example.com", "::2", "[::2]", "x127.0.0.1"])("%s is not", (host) => {
    expect(isLoopbackHost(host)).toBe(false);
  });
});

describe("redirect URIs", () => {
  it.each(["https://app.example.com/cb", "http://localhost:3000/cb", "http://127.0.0.1/cb", "http://[::1]:8080/cb", "com.example.app:/callback"])("accepts %s", (uri) => {
    expect(redirectUriProblem(uri)).toBeUndefined();
  });

  it.each([
    ["a relative URI", "/callback", /absolute/],
    ["a fragment", "https://app.example.com/cb#x", /fragment/],
    ["an empty fragment", "https://app.example.com/cb#", /fragment/],
    ["javascript:", "javascript:alert(1)", /javascript:/],
    ["data:", "data:text/html,x", /data:/],
    ["vbscript:", "vbscript:x", /vbscript:/],
    ["file:", "file:///etc/passwd", /file:/],
    ["blob:", "blob:https://app.example.com/1", /blob:/],
    ["plain http on a public host", "http://app.example.com/cb", /http.*loopback/],
  ])("refuses %s", (_name, uri, problem) => {
    expect(redirectUriProblem(uri)).toMatch(problem);
  });

  it("names each bad URI by its index, and passes a list without one", () => {
    expect(() => checkRedirectUris(["https://a.example/cb", "http://localhost/cb"])).not.toThrow();
    expect(() => checkRedirectUris([])).not.toThrow();
    const error = refusal(() => checkRedirectUris(["https://a.example/cb", "http://a.example/cb", "https://a.example/#x"], "oidc.redirect_uris"));
    expect(error).toMatchObject({ kind: "invalid_argument", reason: "application.redirect_uri_invalid" });
    expect(error.violations).toEqual([
      { field: "oidc.redirect_uris[1]", rule: "application.redirect_uri_invalid", description: expect.stringMatching(/loopback/) },
      { field: "oidc.redirect_uris[2]", rule: "application.redirect_uri_invalid", description: expect.stringMatching(/fragment/) },
    ]);
    expect(error.message).toMatch(/redirect/);
    expect(refusal(() => checkRedirectUris(["nope"])).violations[0]!.field).toBe("redirect_uris[0]");
  });
});

describe("https URLs (OIDC issuers, SAML metadata URLs)", () => {
  it.each(["https://issuer.example.com", "https://issuer.example.com/realms/x?y=1", "http://localhost:8080/issuer", "http://127.0.0.1/"])("accepts %s", (url) => {
    expect(() => checkHttpsUrl(url, "issuer", "idp.issuer_invalid")).not.toThrow();
  });

  it.each([
    ["plain http on a public host", "http://issuer.example.com", /https/],
    ["another scheme", "ftp://issuer.example.com", /https/],
    ["another scheme on a loopback host", "ftp://localhost/issuer", /https/],
    ["a user name", "https://admin@issuer.example.com", /credentials/],
    ["a password", "https://:secret@issuer.example.com", /credentials/],
    ["a fragment", "https://issuer.example.com/#x", /fragment/],
    ["no URL at all", "issuer.example.com", /absolute URL/],
  ])("refuses %s, naming field, reason and problem", (_name, url, problem) => {
    const error = refusal(() => checkHttpsUrl(url, "metadata_url", "application.saml_metadata_invalid"));
    expect(error).toMatchObject({ kind: "invalid_argument", reason: "application.saml_metadata_invalid" });
    expect(error.violations).toEqual([{ field: "metadata_url", rule: "application.saml_metadata_invalid", description: expect.stringMatching(problem) }]);
    expect(error.message).toMatch(/^metadata_url /);
    expect(error.message).toMatch(problem);
  });
});
