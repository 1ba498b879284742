import { ConnectError, type Interceptor } from "@connectrpc/connect";
import type { Metrics } from "../support/metrics.js";
import type { AnyRequest, Next } from "./next.js";

/**
 * RFC 9745 `Deprecation` value: the date (2026-01-01T00:00:00Z) from which the methods marked
 * `deprecated` in the .proto are deprecated in this API.
 */
export const DEPRECATION_HEADER_VALUE = "@1767225600";

/**
 * Marks every response of an rpc with `option deprecated = true` — success or error, on every
 * protocol — with a `Deprecation` header, and counts the call, so operators see who still uses it.
 */
export function createDeprecationInterceptor(metrics: Metrics): Interceptor {
  // Not an async function for the rpcs that are not deprecated (nearly every call): no promise of its own in between.
  return (next) => (req) => (req.method.deprecated ? deprecatedCall(next, req, metrics) : next(req));
}

async function deprecatedCall(next: Next, req: AnyRequest, metrics: Metrics) {
  const procedure = `/${req.service.typeName}/${req.method.name}`;
  metrics.deprecatedCalls.inc({ procedure });
  try {
    const res = await next(req);
    res.header.set("deprecation", DEPRECATION_HEADER_VALUE);
    return res;
  } catch (error) {
    const connectError = ConnectError.from(error);
    connectError.metadata.set("deprecation", DEPRECATION_HEADER_VALUE);
    throw connectError;
  }
}
