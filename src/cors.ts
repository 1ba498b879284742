import type { connectNodeAdapter } from "@connectrpc/connect-node";
import { acceptedRequestId } from "./interceptors/request-id.js";

type NodeHandler = ReturnType<typeof connectNodeAdapter>;

/** What browsers may send: the Connect, gRPC-web and Gatehouse request headers. */
const ALLOWED_HEADERS = [
  "Authorization",
  "Content-Type",
  "Connect-Protocol-Version",
  "Connect-Timeout-Ms",
  "Grpc-Timeout",
  "X-Grpc-Web",
  "X-User-Agent",
  "X-Service-Orgid",
  "X-Request-Id",
  // REST optimistic concurrency: the sequence last read goes back in If-Match.
  "If-Match",
].join(", ");

/** What browser code may read: gRPC-web status trailers-in-headers, request id, deprecation, REST's ETag (the sequence for If-Match). */
const EXPOSED_HEADERS = ["Grpc-Status", "Grpc-Message", "Grpc-Status-Details-Bin", "X-Request-Id", "Deprecation", "Allow", "ETag"].join(", ");

/**
 * CORS for browser clients (Connect and gRPC-web) from the configured origins only. No origin is
 * allowed by default; credentials (cookies) are never involved, tokens travel in Authorization.
 */
export function withCors(handler: NodeHandler, allowedOrigins: readonly string[]): NodeHandler {
  const allowed = new Set(allowedOrigins);
  return (req, res) => {
    // Stryker disable next-line StringLiteral: no allowed origin is "" or any other string that is no origin (config.ts)
    const origin = req.headers.origin ?? "";
    if (allowed.has(origin)) {
      res.setHeader("access-control-allow-origin", origin);
      res.setHeader("vary", "Origin");
      res.setHeader("access-control-expose-headers", EXPOSED_HEADERS);
      if (req.method === "OPTIONS" && req.headers["access-control-request-method"]) {
        res.setHeader("access-control-allow-methods", "GET, POST, PUT, DELETE");
        res.setHeader("access-control-allow-headers", ALLOWED_HEADERS);
        res.setHeader("access-control-max-age", "7200");
        // Answered before the RPC adapter, which sets the request id on every other response.
        res.setHeader("x-request-id", acceptedRequestId(req.headers["x-request-id"]));
        res.writeHead(204);
        res.end();
        return;
      }
    }
    handler(req, res);
  };
}
