import { ConnectError, type Interceptor } from "@connectrpc/connect";
import type { Metrics } from "../support/metrics.js";

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
  return (next) => async (req) => {
    if (!req.method.deprecated) return next(req);
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
  };
}
