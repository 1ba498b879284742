/**
 * The framework ceiling: connect-node answering grpc.health.v1.Health/Check (Gatehouse's own health
 * service implementation) with no interceptors, no request ids, no CORS, no logging, no metrics, behind
 * the same one-port hand-off as src/server.ts (src/transport/one-port.ts, imported): each cleartext
 * connection's first bytes decide whether it goes to the HTTP/2 server (the h2c preface) or the HTTP/1.1
 * server.
 *
 * Usage: node dist/bench/servers/bare-server.js <port>, compiled by the bench (bench/lib/servers.ts), or
 * node --import tsx bench/servers/bare-server.ts <port>; prints "listening <port>"
 */
import { connectNodeAdapter } from "@connectrpc/connect-node";
import http from "node:http";
import http2 from "node:http2";
import type net from "node:net";
import { Health } from "../../gen/grpc/health/v1/health_pb.js";
import { createHealthService, createHealthState } from "../../src/api/health/health-service.js";
import { createOnePortListener } from "../../src/transport/one-port.js";

const health = createHealthState();
const handler = connectNodeAdapter({
  routes(router) {
    router.service(Health, createHealthService(health, [Health.typeName]));
  },
});

const http1 = http.createServer({ keepAliveTimeout: 30_000 }, handler);
const h2c = http2.createServer({ settings: { maxConcurrentStreams: 100 } }, handler);

// Gatehouse's default first-bytes (headers) timeout, so both sides arm the same timer per connection.
const listener = createOnePortListener({ http1, h2c, firstBytesTimeoutMs: 10_000 });

const port = Number(process.argv[2] ?? 0);
listener.listen(port, "127.0.0.1", () => {
  process.stdout.write(`listening ${(listener.address() as net.AddressInfo).port}\n`);
});
// Nothing to drain: the bench stops it between runs.
process.on("SIGTERM", () => process.exit(0));
process.on("SIGINT", () => process.exit(0));
