import { Code, type ConnectRouter, ConnectError, createConnectRouter, createContextValues, type Interceptor } from "@connectrpc/connect";
import { type connectNodeAdapter, universalResponseToNodeResponse } from "@connectrpc/connect-node";
import { createAsyncIterable, type UniversalHandler, type UniversalServerResponse } from "@connectrpc/connect/protocol";
import type { Http2ServerRequest, Http2ServerResponse } from "node:http2";
import { limitBodyTime } from "./body-deadline.js";
import { requestIdKey } from "../interceptors/context-keys.js";
import { PUBLIC_SERVICES } from "../interceptors/public-services.js";
import { acceptedRequestId } from "../interceptors/request-id.js";
import { errorInfoDetail, internalErrorBody, specError, type SpecErrorBody } from "../rest/error-body.js";
import type { Logger } from "../support/logger.js";
import { BINARY_READ, type DecodeCheckOptions, REQUEST_COMPRESSIONS, withDecodeCheck } from "./decode-check.js";
import { createAuthorityCheck, universalRequestOf } from "./node-request.js";
import { peerAddressKey, peerAddressOf } from "./peer.js";

/** A request handler for both node:http and node:http2 (compatibility API) servers. */
export type NodeHandler = ReturnType<typeof connectNodeAdapter>;
type NodeRequest = Parameters<NodeHandler>[0];
type NodeResponse = Parameters<NodeHandler>[1];

export interface NodeAdapterOptions {
  routes: (router: ConnectRouter) => void;
  interceptors: Interceptor[];
  readMaxBytes: number;
  /** How long an HTTP/2 request's body may take to arrive (one-message requests: every RPC that does not stream its
   * requests, the REST routes and the pages). */
  requestTimeoutMs: number;
  logger: Logger;
  reject: DecodeCheckOptions["reject"];
  /** Authenticates a unary call before its body is read (decode-check.ts). */
  admit?: DecodeCheckOptions["admit"];
  /** Everything that is not an RPC path; `x-request-id` is already set on the response. */
  fallback(req: NodeRequest, res: NodeResponse, requestId: string): void;
}

/** The protocol handlers answer these without a body; each gets the SPEC body with ErrorInfo. */
const BODYLESS: Record<number, { status?: number; code: Code; reason: string; message: string }> = {
  405: { code: Code.Unimplemented, reason: "http.method_not_allowed", message: "RPCs take POST" },
  415: { code: Code.InvalidArgument, reason: "http.unsupported_media_type", message: "unsupported content type for an RPC" },
  // connect-es answers 505 here; it is the caller's choice of protocol, not a server fault: 400.
  505: { status: 400, code: Code.FailedPrecondition, reason: "http.version_not_supported", message: "bidirectional streams need HTTP/2" },
};

// Stryker disable next-line StringLiteral: a server request always has a URL (undefined only in its type); no text but an RPC path finds a handler
const NO_PATH = "";

function jsonResponse(status: number, body: SpecErrorBody, header: Headers): UniversalServerResponse {
  const bytes = new TextEncoder().encode(JSON.stringify(body));
  header.set("content-type", "application/json");
  header.set("content-length", String(bytes.byteLength));
  return { status, header, body: createAsyncIterable([bytes]) };
}

function withErrorBody(response: UniversalServerResponse): UniversalServerResponse {
  const known = BODYLESS[response.status];
  if (!known) return response;
  // Stryker disable next-line ConditionalExpression: the protocol handlers answer 405, 415 and 505 only without a body (a guard)
  if (response.body !== undefined) return response;
  const header = new Headers(response.header);
  if (response.status === 405) header.set("allow", "POST");
  return jsonResponse(known.status ?? response.status, specError(known.code, known.message, [errorInfoDetail(known.reason)]).body, header);
}

/**
 * The public services (health, reflection) answer anyone, so their requests are read before any caller is known:
 * their messages are a service name or a file name, and a few KiB inflated to the 4 MiB of any other call would be
 * work anyone could make the server do.
 */
export const PUBLIC_MAX_BYTES = 64 * 1024;
const readMaxBytesOf = (handler: UniversalHandler, readMaxBytes: number) =>
  PUBLIC_SERVICES.has(handler.service.typeName) ? Math.min(readMaxBytes, PUBLIC_MAX_BYTES) : readMaxBytes;

/** Whether the RPC's request is a stream of messages (client or bidirectional streaming), which may rightly last. */
const streamsRequests = (handler: UniversalHandler | undefined) =>
  handler !== undefined && (handler.method.methodKind === "client_streaming" || handler.method.methodKind === "bidi_streaming");

/**
 * connect-node's adapter, with what a server facing hostile clients needs: every request gets its
 * request id (context value and `x-request-id` header) before anything can fail, every RPC's
 * request is decoded before connect-es would (see decode-check.ts), the protocol handlers' empty
 * 405/415/505 answers get an error body, and a failed response write is a warning, not a
 * `console.error` with a stack for anyone to trigger.
 */
export function createNodeAdapter(options: NodeAdapterOptions): NodeHandler {
  const router = createConnectRouter({
    interceptors: options.interceptors,
    readMaxBytes: options.readMaxBytes,
    acceptCompression: REQUEST_COMPRESSIONS,
    // Connect JSON refuses what it does not know, like the REST routes (decode-check.ts says which key).
    jsonOptions: { ignoreUnknownFields: false },
    binaryOptions: BINARY_READ,
  });
  options.routes(router);
  const paths = new Map<string, UniversalHandler>();
  for (const handler of router.handlers) paths.set(handler.requestPath, withDecodeCheck(handler, { readMaxBytes: readMaxBytesOf(handler, options.readMaxBytes), reject: options.reject, ...(options.admit ? { admit: options.admit } : {}) }));
  const authorityOf = createAuthorityCheck();

  return (req, res) => {
    const requestId = acceptedRequestId(req.headers["x-request-id"]);
    res.setHeader("x-request-id", requestId);
    const handler = paths.get(req.url?.split("?", 1)[0] ?? NO_PATH);
    if (req.httpVersionMajor === 2 && !streamsRequests(handler)) limitBodyTime(req as Http2ServerRequest, res as Http2ServerResponse, options.requestTimeoutMs);
    if (!handler) {
      options.fallback(req, res, requestId);
      return;
    }
    const host = authorityOf(req);
    if (host === undefined) {
      const { status, body } = specError(Code.InvalidArgument, "the request needs a valid Host header", [errorInfoDetail("http.bad_host")]);
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify(body));
      return;
    }
    const request = universalRequestOf(req, res, host, createContextValues().set(requestIdKey, requestId).set(peerAddressKey, peerAddressOf(req.socket)));
    handler(request)
      .then((response) => universalResponseToNodeResponse(withErrorBody(response), res))
      .catch((reason: unknown) => {
        // The client went away or reset the stream: nothing to answer, nothing the server did wrong.
        const error = ConnectError.from(reason);
        if (error.code !== Code.Aborted && error.code !== Code.Canceled) {
          options.logger.warn({ requestId, procedure: handler.requestPath, code: Code[error.code], message: error.rawMessage.slice(0, 200) }, "response not delivered");
        }
        if (!res.headersSent && !res.destroyed) {
          const { status, body } = internalErrorBody(requestId);
          res.writeHead(status, { "content-type": "application/json" });
          // Stryker disable ConditionalExpression: the `else if` below is equivalent here: the adapter's write fails only before the response ended, so an ended one is never destroyed either way (a range: Stryker reads only a comment that leads a statement, and none leads a `catch`/`finally`)
          res.end(JSON.stringify(body));
        } else if (!res.writableEnded) res.destroy();
      });
  };
}
