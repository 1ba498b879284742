import { createContextValues, type ConnectRouter, type Interceptor } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { readFileSync } from "node:fs";
import http from "node:http";
import http2 from "node:http2";
import net from "node:net";
import type tls from "node:tls";
import type { Config } from "./config.js";
import { withCors } from "./cors.js";
import { createHttp1Connections } from "./http1-connections.js";
import { requestIdKey } from "./interceptors/context-keys.js";
import { acceptedRequestId } from "./interceptors/request-id.js";
import { createRestGateway } from "./rest/gateway.js";
import type { Logger } from "./support/logger.js";
import type { Metrics } from "./support/metrics.js";

/** The OpenAPI document of the REST routes, generated from the protos by `npm run generate`. */
const openApiDocument = readFileSync(new URL("../gen/openapi.json", import.meta.url));

/** The first bytes of every cleartext HTTP/2 (prior knowledge) connection. */
const HTTP2_PREFACE = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");

export interface ServerOptions {
  config: Pick<Config, "maxRequestBytes" | "headersTimeoutMs" | "requestTimeoutMs" | "tls" | "corsOrigins">;
  routes: (router: ConnectRouter) => void;
  interceptors: Interceptor[];
  metrics: Metrics;
  logger: Logger;
}

export interface GatehouseServer {
  listen(port: number, host: string): Promise<{ port: number }>;
  /** Stops accepting, lets in-flight calls finish (at most `timeoutMs`), then closes every connection. */
  close(timeoutMs: number): Promise<void>;
}

/**
 * Answers what is not an RPC: REST routes (transcoded to their RPCs), `GET /openapi.json`,
 * `GET /metrics`, and 404 in the SPEC error-body shape for the rest.
 */
function createFallback(metrics: Metrics, logger: Logger, rest: ReturnType<typeof createRestGateway>): NonNullable<Parameters<typeof connectNodeAdapter>[0]["fallback"]> {
  return (req, res) => {
    if (req.method === "GET" && req.url?.split("?")[0] === "/openapi.json") {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(openApiDocument);
      return;
    }
    if (req.method === "GET" && req.url?.split("?")[0] === "/metrics") {
      void metrics.registry.metrics().then((text) => {
        res.writeHead(200, { "content-type": metrics.registry.contentType });
        res.end(text);
      });
      return;
    }
    rest(req, res).then(
      (handled) => {
        if (handled) return;
        res.writeHead(404, { "content-type": "application/json" });
        res.end(JSON.stringify({ code: 5, message: `no route for ${req.method} ${req.url?.split("?")[0]}`, details: [] }));
      },
      (error: unknown) => {
        // Like every unexpected error: the cause goes to the log under a request id, never to the caller.
        const requestId = acceptedRequestId(req.headers["x-request-id"]);
        logger.error({ requestId, err: error, path: req.url?.split("?")[0] }, "internal error in REST gateway");
        if (!res.headersSent) res.writeHead(500, { "content-type": "application/json", "x-request-id": requestId });
        res.end(JSON.stringify({ code: 13, message: `internal error (request id ${requestId})`, details: [] }));
      },
    );
  };
}

/**
 * One listener for everything: Connect, gRPC and gRPC-web, over HTTP/1.1 and HTTP/2. Node's cleartext
 * HTTP/2 server cannot fall back to HTTP/1.1, so each connection's first bytes decide: the HTTP/2
 * preface goes to the HTTP/2 server, anything else to the HTTP/1.1 server. With TLS, ALPN decides.
 */
export function createServer(options: ServerOptions): GatehouseServer {
  const { config, metrics } = options;
  const http1Connections = createHttp1Connections();
  const connectHandler = connectNodeAdapter({
    routes: options.routes,
    interceptors: options.interceptors,
    readMaxBytes: config.maxRequestBytes,
    contextValues: (req) => createContextValues().set(requestIdKey, acceptedRequestId(req.headers["x-request-id"])),
    fallback: createFallback(metrics, options.logger, createRestGateway({ routes: options.routes, interceptors: options.interceptors, maxRequestBytes: config.maxRequestBytes })),
  });
  const handler = http1Connections.track(withCors(connectHandler, config.corsOrigins));

  const http2Sessions = new Set<http2.ServerHttp2Session>();
  const trackSession = (session: http2.ServerHttp2Session) => {
    http2Sessions.add(session);
    session.once("close", () => http2Sessions.delete(session));
  };

  const http1 = http.createServer(
    {
      headersTimeout: config.headersTimeoutMs,
      requestTimeout: config.requestTimeoutMs,
      keepAliveTimeout: 5_000,
      // Node checks both timeouts only this often (30 s by default): check often enough to enforce them.
      connectionsCheckingInterval: Math.max(50, Math.min(1_000, Math.floor(config.headersTimeoutMs / 2))),
    },
    handler,
  );
  // Node starts the connection tracking that enforces headersTimeout and requestTimeout on
  // "listening". This server never listens (sockets are handed to it), so start it explicitly.
  http1.emit("listening");
  const h2c = http2.createServer({}, handler);
  h2c.on("session", trackSession);
  // An idle HTTP/2 stream (a client that stopped sending) is reset after the request timeout.
  h2c.setTimeout(config.requestTimeoutMs);

  let listener: net.Server;
  if (config.tls) {
    const secure = http2.createSecureServer(
      { cert: readFileSync(config.tls.certPath), key: readFileSync(config.tls.keyPath), allowHTTP1: true, ALPNProtocols: ["h2", "http/1.1"] },
      handler,
    );
    secure.on("session", trackSession);
    secure.on("secureConnection", (socket: tls.TLSSocket) => {
      if (socket.alpnProtocol !== "h2") http1Connections.add(socket);
    });
    secure.setTimeout(config.requestTimeoutMs);
    listener = secure;
  } else {
    listener = net.createServer((socket) => {
      // Peek: read the first chunk, put it back, and hand the socket to the server that speaks it.
      socket.once("data", (chunk: Buffer) => {
        socket.pause();
        socket.unshift(chunk);
        const isHttp2 = chunk.subarray(0, HTTP2_PREFACE.length).equals(HTTP2_PREFACE.subarray(0, Math.min(chunk.length, HTTP2_PREFACE.length)));
        if (isHttp2) {
          // No resume(): the HTTP/2 session reads the socket's handle itself, and a resumed JS
          // stream would steal bytes from it.
          h2c.emit("connection", socket);
        } else {
          http1Connections.add(socket);
          http1.emit("connection", socket);
          socket.resume();
        }
      });
      // A client that connects and sends nothing is dropped after the headers timeout; from the
      // first byte on, the HTTP servers' own timeouts apply.
      socket.setTimeout(config.headersTimeoutMs, () => socket.destroy());
      socket.once("data", () => socket.setTimeout(0));
    });
  }

  return {
    listen(port, host) {
      return new Promise((resolve, reject) => {
        listener.once("error", reject);
        listener.listen(port, host, () => {
          listener.off("error", reject);
          resolve({ port: (listener.address() as net.AddressInfo).port });
        });
      });
    },
    async close(timeoutMs) {
      const stopped = new Promise<void>((resolve) => listener.close(() => resolve()));
      // GOAWAY: HTTP/2 clients open no new streams; open ones finish, then the session closes.
      for (const session of http2Sessions) session.close();
      // HTTP/1.1 keep-alive sockets close as soon as they are idle (between requests).
      http1Connections.drain();
      // Stops Node's timeout checks; it reports "not running" because it never listened, as expected.
      http1.close(() => undefined);
      const deadline = Date.now() + timeoutMs;
      while ((http1Connections.open > 0 || http2Sessions.size > 0) && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      http1Connections.destroyAll();
      for (const session of http2Sessions) session.destroy();
      await stopped;
    },
  };
}
