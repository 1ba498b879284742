import type { ConnectRouter, Interceptor } from "@connectrpc/connect";
import { readFileSync } from "node:fs";
import http from "node:http";
import http2 from "node:http2";
import type net from "node:net";
import type tls from "node:tls";
import { ErrorInfoSchema } from "../gen/google/rpc/error_details_pb.js";
import type { Config } from "./config.js";
import { withCors } from "./cors.js";
import { createHttp1Connections } from "./http1-connections.js";
import { codeName } from "./interceptors/code-name.js";
import { requestIdKey } from "./interceptors/context-keys.js";
import { toConnectError } from "./interceptors/error-mapping.js";
import { protocolOf } from "./interceptors/observe.js";
import { errorInfoDetail, internalErrorBody, specError } from "./rest/error-body.js";
import { createRestGateway, RequestAbandonedError } from "./rest/gateway.js";
import type { Logger } from "./support/logger.js";
import type { Metrics } from "./support/metrics.js";
import type { DecodeCheckOptions } from "./transport/decode-check.js";
import { trackAcceptedSockets } from "./transport/accepted-sockets.js";
import { createHttp2Sessions } from "./transport/http2-sessions.js";
import { createNodeAdapter, type NodeAdapterOptions } from "./transport/node-adapter.js";
import { createOnePortListener } from "./transport/one-port.js";
import type { PortReservation } from "./transport/port-reservation.js";
import { createStreamLimitInterceptor } from "./transport/stream-limits.js";
import type { PageHandler } from "./pages/pages.js";

/** The OpenAPI document of the REST routes, generated from the protos by `npm run generate`. */
const openApiDocument = readFileSync(new URL("../gen/openapi.json", import.meta.url));

export interface ServerOptions {
  config: Pick<
    Config,
    | "maxRequestBytes"
    | "headersTimeoutMs"
    | "requestTimeoutMs"
    | "idleTimeoutMs"
    | "http2MaxConcurrentStreams"
    | "maxStreamingCalls"
    | "maxStreamingCallsPerPeer"
    | "streamMaxLifetimeMs"
    | "tls"
    | "corsOrigins"
  >;
  routes: (router: ConnectRouter) => void;
  interceptors: Interceptor[];
  /** Authenticates a unary RPC before its body is read (interceptors/authentication.ts createAdmission). */
  admit?: DecodeCheckOptions["admit"];
  /** Whether the server should get traffic (`GET /readyz`): storage open and migrated, not draining. */
  isReady: () => boolean;
  metrics: Metrics;
  logger: Logger;
  /** The hosted pages the mails link to (src/pages/), answered before the REST routes. */
  pages?: PageHandler;
}

export interface GatehouseServer {
  /** Serves on the reserved port, starting with the connections that arrived while starting. */
  listen(reservation: PortReservation): Promise<{ port: number }>;
  /** Stops accepting, lets in-flight calls finish (at most `timeoutMs`), then closes every connection. */
  close(timeoutMs: number): Promise<void>;
}

/**
 * Answers what is not an RPC: the health URLs, the hosted pages under /ui/login/, REST routes (transcoded to their RPCs),
 * `GET /openapi.json`, `GET /metrics`, and 404 in the SPEC error-body shape (with ErrorInfo) for the rest.
 */
function createFallback(
  metrics: Metrics,
  logger: Logger,
  rest: ReturnType<typeof createRestGateway>,
  isReady: () => boolean,
  pages: PageHandler | undefined,
): NodeAdapterOptions["fallback"] {
  return (req, res, requestId) => {
    // Stryker disable next-line OptionalChaining: node gives every request it serves a url
    const path = req.url?.split("?")[0];
    // Plain HTTP probes for load balancers and Kubernetes, without a token: /healthz says the process
    // answers (always cheap), /readyz whether it should get traffic.
    if ((req.method === "GET" || req.method === "HEAD") && (path === "/healthz" || path === "/readyz")) {
      const ready = path === "/healthz" || isReady();
      res.writeHead(ready ? 200 : 503, { "content-type": "text/plain; charset=utf-8", "cache-control": "no-store" });
      // Node sends no body in the answer to HEAD (HTTP/1.1 and HTTP/2), whatever end() is given.
      res.end(ready ? "ok\n" : "not ready\n");
      return;
    }
    if (req.method === "GET" && path === "/openapi.json") {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(openApiDocument);
      return;
    }
    if (req.method === "GET" && path === "/metrics") {
      void metrics.registry.metrics().then((text) => {
        res.writeHead(200, { "content-type": metrics.registry.contentType });
        res.end(text);
      });
      return;
    }
    if (pages?.(req, res, requestId)) return;
    rest(req, res, requestId).then(
      (handled) => {
        if (handled) return;
        // The path is echoed cut short: a hostile 1 MB path does not become a 1 MB answer.
        // Stryker disable next-line StringLiteral: never used: node gives every request it serves a url, so path is a string
        const shownPath = (path ?? "").slice(0, 200);
        const { status, body } = specError(5, `no route for ${req.method} ${shownPath}`, [errorInfoDetail("route.not_found")]);
        res.writeHead(status, { "content-type": "application/json" });
        res.end(JSON.stringify(body));
      },
      (error: unknown) => {
        // (The REST gateway answers every error a request can cause with its typed error, so only an abandoned request
        // comes here in tests: the `true` mutant survives, its `false` sibling does not.)
        if (error instanceof RequestAbandonedError) {
          // Stryker disable next-line MethodExpression,OptionalChaining: the path is cut short in the log line only, which no test reads
          logger.info({ requestId, path: path?.slice(0, 200) }, error.message);
          res.destroy();
          return;
        }
        // A guard for a bug in the gateway, which no request can cause on purpose (so no test does).
        // Like every unexpected error: the cause goes to the log under a request id, never to the caller.
        // Stryker disable next-line all: unreachable by a request (see above)
        logger.error({ requestId, err: error, path: path?.slice(0, 200) }, "internal error in REST gateway");
        const { status, body } = internalErrorBody(requestId);
        // Stryker disable next-line all: unreachable by a request (see above)
        if (!res.headersSent) res.writeHead(status, { "content-type": "application/json" });
        res.end(JSON.stringify(body));
      },
    );
  };
}

/**
 * A request the transport refused before its RPC ran (undecodable, too large, bad headers): one
 * warning without a stack and one metrics sample, so no caller can flood the error log with them.
 * A streaming call refused while its rpc ran is recorded by the rpc (observe.ts), once, like any call.
 */
function createRejection(metrics: Metrics, logger: Logger): DecodeCheckOptions["reject"] {
  return (request, handler, error, rpcRunning) => {
    // Stryker disable next-line OptionalChaining,StringLiteral: the node adapter gives every request its context values and its id
    const requestId = request.contextValues?.get(requestIdKey) ?? "";
    const wire = toConnectError(error, requestId, logger);
    if (rpcRunning) return wire;
    const code = codeName(wire.code);
    metrics.rpcCalls.inc({ procedure: handler.requestPath, code });
    logger.warn(
      // Stryker disable next-line OptionalChaining: toConnectError gives every error an ErrorInfo
      { requestId, procedure: handler.requestPath, protocol: protocolOf(request.header.get("content-type")), code, reason: wire.findDetails(ErrorInfoSchema)[0]?.reason },
      "request refused before the rpc",
    );
    return wire;
  };
}

/**
 * One listener for everything: Connect, gRPC and gRPC-web, over HTTP/1.1 and HTTP/2. In cleartext each
 * connection's first bytes decide (transport/one-port.ts); with TLS, ALPN decides.
 */
export function createServer(options: ServerOptions): GatehouseServer {
  const { config, metrics } = options;
  const http1Connections = createHttp1Connections();
  // Innermost, after authentication: a caller without a token cannot take a stream slot of a
  // protected service; the error mapping outside it gives its refusal ErrorInfo.
  const interceptors = [...options.interceptors, createStreamLimitInterceptor(config)];
  const reject = createRejection(metrics, options.logger);
  const rest = createRestGateway({ routes: options.routes, interceptors, maxRequestBytes: config.maxRequestBytes, reject, ...(options.admit ? { admit: options.admit } : {}) });
  const connectHandler = createNodeAdapter({
    routes: options.routes,
    interceptors,
    readMaxBytes: config.maxRequestBytes,
    requestTimeoutMs: config.requestTimeoutMs,
    logger: options.logger,
    reject,
    ...(options.admit ? { admit: options.admit } : {}),
    fallback: createFallback(metrics, options.logger, rest, options.isReady, options.pages),
  });
  const handler = http1Connections.track(withCors(connectHandler, config.corsOrigins));

  const http2Sessions = createHttp2Sessions({ idleTimeoutMs: config.idleTimeoutMs });
  const trackSession = (session: http2.ServerHttp2Session) => http2Sessions.track(session);
  // Node advertises 2^32-1 concurrent streams by default: one connection could hold any number of
  // stalled calls. Streams beyond this limit are refused (REFUSED_STREAM) by the HTTP/2 layer.
  const http2Settings = { maxConcurrentStreams: config.http2MaxConcurrentStreams };

  const http1 = http.createServer(
    {
      headersTimeout: config.headersTimeoutMs,
      requestTimeout: config.requestTimeoutMs,
      keepAliveTimeout: config.idleTimeoutMs,
      // Node checks both timeouts only this often (30 s by default): check often enough to enforce them.
      // Stryker disable next-line MethodExpression,ArithmeticOperator: how often Node looks, not what it enforces (the timeouts' answers are tested); not worth a timed test
      connectionsCheckingInterval: Math.max(50, Math.min(1_000, Math.floor(config.headersTimeoutMs / 2))),
    },
    handler,
  );
  // Node starts the connection tracking that enforces headersTimeout and requestTimeout on
  // "listening". This server never listens (sockets are handed to it), so start it explicitly.
  http1.emit("listening");
  const h2c = http2.createServer({ settings: http2Settings }, handler);
  h2c.on("session", trackSession);
  // A session on which nothing moves (a client that stopped sending) is destroyed after the request timeout.
  h2c.setTimeout(config.requestTimeoutMs);

  let listener: net.Server;
  if (config.tls) {
    const secure = http2.createSecureServer(
      { cert: readFileSync(config.tls.certPath), key: readFileSync(config.tls.keyPath), allowHTTP1: true, settings: http2Settings },
      handler,
    );
    secure.on("session", trackSession);
    secure.on("secureConnection", (socket: tls.TLSSocket) => {
      if (socket.alpnProtocol !== "h2") http1Connections.add(socket);
    });
    secure.setTimeout(config.requestTimeoutMs);
    listener = secure;
  } else {
    listener = createOnePortListener({
      http1,
      h2c,
      firstBytesTimeoutMs: config.headersTimeoutMs,
      onHttp1: (socket) => http1Connections.add(socket),
    });
  }

  const acceptedSockets = trackAcceptedSockets(listener);

  return {
    listen(reservation) {
      return new Promise((resolve, reject) => {
        // Stryker disable next-line StringLiteral: listening on the reserved handle (the port is bound at reservation, port-reservation.ts) does not fail on demand; a guard
        listener.once("error", reject);
        // Takes over the reserved socket handle: the port never closes between start-up and serving.
        listener.listen(reservation.server, () => {
          // Stryker disable next-line StringLiteral: once listening, the promise is settled: a later error would call reject in vain
          listener.off("error", reject);
          for (const socket of reservation.takeHeld()) {
            listener.emit("connection", socket);
            // Stryker disable next-line ConditionalExpression: resuming a held socket under TLS too changes nothing (the TLS socket reads the handle itself); false is killed by test/server/fallback-survivors
            if (!config.tls) socket.resume();
          }
          resolve({ port: reservation.port });
        });
      });
    },
    async close(timeoutMs) {
      const stopped = new Promise<void>((resolve) => listener.close(() => resolve()));
      // GOAWAY: HTTP/2 clients open no new streams; open ones finish, then the session closes.
      http2Sessions.closeAll();
      // HTTP/1.1 keep-alive sockets close as soon as they are idle (between requests).
      http1Connections.drain();
      // Stops Node's timeout checks; it reports "not running" because it never listened, as expected.
      http1.close(() => undefined);
      const deadline = Date.now() + timeoutMs;
      // (`<=` would only add one 20 ms round at the deadline's very millisecond: that mutant survives.)
      while ((http1Connections.open > 0 || http2Sessions.size > 0) && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      http2Sessions.destroyAll();
      acceptedSockets.destroyAll();
      await stopped;
    },
  };
}
