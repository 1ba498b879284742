import { type Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import { codeName } from "./code-name.js";
import { accessLogOf, type Logger } from "../support/logger.js";
import type { Metrics } from "../support/metrics.js";
import { principalKey, requestIdKey } from "./context-keys.js";

export function protocolOf(contentType: string | null): string {
  // Stryker disable next-line OptionalChaining: connect-node refuses a call without a content type before any interceptor runs (no rpc here allows Connect GET)
  if (contentType?.startsWith("application/grpc-web")) return "grpc-web";
  // Stryker disable next-line OptionalChaining: as above; the transport's refusals (src/server.ts) also come only with a content type (framed POSTs, REST as application/json)
  if (contentType?.startsWith("application/grpc")) return "grpc";
  return "connect";
}

/**
 * One JSON log line and one metrics sample per call: request id, procedure, protocol, code,
 * duration and caller. Never the message, headers or tokens. Echoes the request id to the client.
 */
export function createObserveInterceptor(logger: Logger, metrics: Metrics): Interceptor {
  const accessLog = accessLogOf(logger);
  return (next) => async (req) => {
    const started = process.hrtime.bigint();
    const requestId = req.contextValues.get(requestIdKey);
    const procedure = `/${req.service.typeName}/${req.method.name}`;
    let code: Code | undefined;
    try {
      const res = await next(req);
      res.header.set("x-request-id", requestId);
      return res;
    } catch (error) {
      const connectError = ConnectError.from(error);
      code = connectError.code;
      connectError.metadata.set("x-request-id", requestId);
      throw connectError;
    } finally {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const labels = { procedure, code: codeName(code) };
      metrics.rpcCalls.inc(labels);
      metrics.rpcDuration.observe(labels, seconds);
      accessLog.info(
        {
          requestId,
          procedure,
          protocol: protocolOf(req.header.get("content-type")),
          code: labels.code,
          durationMs: Math.round(seconds * 1e6) / 1e3,
          caller: req.contextValues.get(principalKey)?.userId,
        },
        "rpc",
      );
    }
  };
}
