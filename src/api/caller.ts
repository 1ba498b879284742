import type { HandlerContext } from "@connectrpc/connect";
import type { Caller } from "../context.js";
import { ownOrganizationKey, principalKey, requestedOrgIdKey } from "../interceptors/context-keys.js";

/** The caller of an authenticated call, as the authentication interceptor left it in the context. */
export function callerOf(context: HandlerContext): Caller {
  const principal = context.values.get(principalKey);
  // Stryker disable next-line ConditionalExpression,StringLiteral: unreachable: the authentication interceptor runs before every handler that asks for the caller, so there is always a principal; the message is for a developer who breaks that
  if (!principal) throw new Error("no principal: the authentication interceptor did not run");
  return { principal, requestedOrgId: context.values.get(requestedOrgIdKey), ownOrganization: context.values.get(ownOrganizationKey) };
}
