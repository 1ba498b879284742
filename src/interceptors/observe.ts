import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import { codeName } from "./code-name.js";
import { endedCallError } from "./error-mapping.js";
import { accessLogOf, type Logger } from "../support/logger.js";
import type { Metrics } from "../support/metrics.js";
import { principalKey, requestIdKey } from "./context-keys.js";
import { answerOf } from "./next.js";
import { ErrorInfoSchema } from "../../gen/google/rpc/error_details_pb.js";

export function protocolOf(contentType: string | null): string {
  // Stryker disable next-line OptionalChaining: connect-node refuses a call without a content type before any interceptor runs (no rpc here allows Connect GET)
  if (contentType?.startsWith("application/grpc-web")) return "grpc-web";
  // Stryker disable next-line OptionalChaining: as above; the transport's refusals (src/server.ts) also come only with a content type (framed POSTs, REST as application/json)
  if (contentType?.startsWith("application/grpc")) return "grpc";
  return "connect";
}


/** The reason of a wire error's ErrorInfo (every error the mapping made has one). */
const reasonOf = (error: ConnectError): string | undefined => error.findDetails(ErrorInfoSchema)[0]?.reason;

/**
 * One JSON log line and one metrics sample per call: request id, procedure, protocol, code (and a failed call's
 * reason), duration and caller. Never the message, headers or tokens. Echoes the request id to the client.
 * A streaming call is recorded when its stream ends, with the code it ended with and its whole duration (recorded when
 * its handler answered, it would say `ok` for an import that failed an hour later).
 */
export function createObserveInterceptor(logger: Logger, metrics: Metrics): Interceptor {
  const accessLog = accessLogOf(logger);
  return (next) => (req) => {
    const started = process.hrtime.bigint();
    const requestId = req.contextValues.get(requestIdKey);
    const procedure = `/${req.service.typeName}/${req.method.name}`;
    const record = (code: Code | undefined, reason?: string) => {
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
          // A failed call's stable reason (its ErrorInfo), so the line says why without the message (pino leaves out
          // a key whose value is undefined, as it does the caller of an unauthenticated call).
          reason,
          durationMs: Math.round(seconds * 1e6) / 1e3,
          caller: req.contextValues.get(principalKey)?.userId,
        },
        "rpc",
      );
    };
    const failed = (error: unknown) => {
      const connectError = ConnectError.from(error);
      connectError.metadata.set("x-request-id", requestId);
      return connectError;
    };
    // Promise callbacks rather than an async function: this runs for every call, the no-op included.
    return answerOf(next, req).then(
      (res) => {
        res.header.set("x-request-id", requestId);
        if (!res.stream) {
          record(undefined);
          return res;
        }
        return { ...res, message: observedStream(res.message) };
      },
      (error: unknown) => {
        const connectError = failed(error);
        record(connectError.code, reasonOf(connectError));
        throw connectError;
      },
    );

    /** A streaming answer's messages, recorded when the stream ends (with the code it ended with). */
    async function* observedStream<T>(messages: AsyncIterable<T>) {
      let code: Code | undefined;
      let reason: string | undefined;
      let completed = false;
      try {
        yield* messages;
        completed = true;
      } catch (error) {
        const connectError = failed(error);
        code = connectError.code;
        reason = reasonOf(connectError);
        throw connectError;
      } finally {
        // A stream whose answers stopped being read (left by `return()`), or that ended because its call did (a
        // Health.Watch whose client went away), ended with its call: deadline_exceeded or canceled.
        if (code === undefined && (!completed || req.signal.aborted)) code = endedCallError(req.signal).code;
        record(code, reason);
      }
    }
  };
}
