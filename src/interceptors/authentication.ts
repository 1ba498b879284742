import type { Interceptor } from "@connectrpc/connect";
import type { UniversalHandler, UniversalServerRequest } from "@connectrpc/connect/protocol";
import { authenticate } from "../access/authenticate.js";
import { type AccessRows, createPrincipalCache } from "../access/principal-cache.js";
import type { Deps } from "../context.js";
import type { Principal } from "../domain/principal.js";
import type { OrganizationRow } from "../store/rows.js";
import { invalidArgument } from "../domain/errors.js";
import { admissionRefusalKey, ownOrganizationKey, principalKey, requestedOrgIdKey } from "./context-keys.js";
import { PUBLIC_SERVICES } from "./public-services.js";
import type { AnyRequest, Next } from "./next.js";

const ORG_HEADER = "x-service-orgid";

/**
 * The caller of a call: the Bearer token's principal, and its own organization as read with it (read, or cached until
 * a change of access), which serves the call's selection of that organization (selectOrganization).
 */
export function createAuthenticator(deps: Deps) {
  const principals = createPrincipalCache(deps.store);
  return async function authenticateCall(header: Headers): Promise<{ principal: Principal; organization: OrganizationRow | undefined }> {
    let rows: AccessRows | undefined;
    const principal = await authenticate(deps, header.get("authorization"), async (tokenId) => (rows = await principals(tokenId)));
    // Stryker disable next-line OptionalChaining: authenticate returned, so it loaded the rows (it reads them before any check that could pass without them)
    return { principal, organization: rows?.organization };
  };
}

export type Authenticator = ReturnType<typeof createAuthenticator>;

/**
 * Whether a unary call of a protected service may have its body read, inflated and parsed (decode-check.ts): work a
 * caller can trigger comes after its authentication, and a few KiB gzipped inflate to a 4 MiB body. Only a gate: a call
 * not let in gets an empty message, and the interceptor below refuses it with the admission's error (with the log line
 * and the wait for durability of any refused call); a call let in is authenticated again there once its body is in
 * (from the principal cache), so a change of rights while a slow body arrives is obeyed.
 */
export function createAdmission(authenticateCall: Authenticator) {
  return async (request: UniversalServerRequest, handler: UniversalHandler): Promise<boolean> => {
    const values = request.contextValues;
    if (handler.method.methodKind !== "unary" || PUBLIC_SERVICES.has(handler.service.typeName) || values === undefined) return true;
    try {
      await authenticateCall(request.header);
      return true;
    } catch (error) {
      // The call runs on an empty message: it must end with this refusal even if its token became good meanwhile.
      values.set(admissionRefusalKey, error);
      return false;
    }
  };
}

/** Resolves the Bearer token into the principal and reads `x-service-orgid`, before any handler runs. */
export function createAuthenticationInterceptor(authenticateCall: Authenticator): Interceptor {
  // Not an async function for the public services (health, reflection): no promise of its own in between.
  return (next) => (req) => (PUBLIC_SERVICES.has(req.service.typeName) ? next(req) : authenticated(next, req));

  async function authenticated(next: Next, req: AnyRequest) {
    const refused = req.contextValues.get(admissionRefusalKey);
    if (refused !== undefined) throw refused;
    const { principal, organization } = await authenticateCall(req.header);
    req.contextValues.set(principalKey, principal);
    req.contextValues.set(ownOrganizationKey, organization);
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
