import { createContextKey } from "@connectrpc/connect";
import type { Principal } from "../domain/principal.js";
import type { OrganizationRow } from "../store/rows.js";

/** Id of the request: in every log line of the call, in the `x-request-id` response header and in internal errors. */
export const requestIdKey = createContextKey<string>("", { description: "request id" });

/** The authenticated caller; set by the authentication interceptor. */
export const principalKey = createContextKey<Principal | undefined>(undefined, { description: "principal" });

/**
 * Why a unary call was not let in before its body was read (authentication.ts createAdmission): its call then runs on
 * an empty message, so the interceptor must refuse it with this, whatever a second look at its token would say.
 */
export const admissionRefusalKey = createContextKey<unknown>(undefined, { description: "admission refusal" });

/** The caller's own organization, as read (or cached) with its principal; set by the authentication interceptor. */
export const ownOrganizationKey = createContextKey<OrganizationRow | undefined>(undefined, { description: "own organization" });

/** The organization named by `x-service-orgid`, when the request names one. */
export const requestedOrgIdKey = createContextKey<string | undefined>(undefined, { description: "x-service-orgid" });
