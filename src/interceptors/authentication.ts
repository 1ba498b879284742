import type { Interceptor } from "@connectrpc/connect";
import { authenticate } from "../access/authenticate.js";
import { type AccessRows, createPrincipalCache } from "../access/principal-cache.js";
import type { Deps } from "../context.js";
import { invalidArgument } from "../domain/errors.js";
import { ownOrganizationKey, principalKey, requestedOrgIdKey } from "./context-keys.js";
import { PUBLIC_SERVICES } from "./public-services.js";
import type { AnyRequest, Next } from "./next.js";

const ORG_HEADER = "x-service-orgid";

/** Resolves the Bearer token into the principal and reads `x-service-orgid`, before any handler runs. */
export function createAuthenticationInterceptor(deps: Deps): Interceptor {
  const principals = createPrincipalCache(deps.store);
  // Not an async function for the public services (health, reflection): no promise of its own in between.
  return (next) => (req) => (PUBLIC_SERVICES.has(req.service.typeName) ? next(req) : authenticated(next, req));

  async function authenticated(next: Next, req: AnyRequest) {
    // The rows the principal is made of (read, or cached until a change of access): the call's own organization among
    // them serves the call's selection of it (selectOrganization), as current as the principal.
    let rows: AccessRows | undefined;
    const principal = await authenticate(deps, req.header.get("authorization"), async (tokenId) => (rows = await principals(tokenId)));
    req.contextValues.set(principalKey, principal);
    // Stryker disable next-line OptionalChaining: authenticate returned, so it loaded the rows (it reads them before any check that could pass without them)
    req.contextValues.set(ownOrganizationKey, rows?.organization);
    const requestedOrgId = req.header.get(ORG_HEADER);
    if (requestedOrgId !== null) {
      if (requestedOrgId.length === 0 || requestedOrgId.length > 200) {
        throw invalidArgument("request.invalid", `${ORG_HEADER} must be 1 to 200 characters`, [
          { field: ORG_HEADER, description: "must be 1 to 200 characters", rule: "header.length" },
        ]);
      }
      req.contextValues.set(requestedOrgIdKey, requestedOrgId);
    }
    return next(req);
  }
}
