import net from "node:net";
import { afterEach, expect, it } from "vitest";
import { Health, HealthCheckResponse_ServingStatus } from "../../gen/grpc/health/v1/health_pb.js";
import { loadConfig } from "../../src/config.js";
import { createServer } from "../../src/server.js";
import { createLogger } from "../../src/support/logger.js";
import { createMetrics } from "../../src/support/metrics.js";
import { reservePort, type PortReservation } from "../../src/transport/port-reservation.js";
import { eventually } from "../support/eventually.js";
import { LogCapture } from "../support/server.js";

// What a graceful stop does with HTTP/1.1 requests that reach it after it began: a request is either answered or
// not run at all — never run and left without an answer (a client would retry it elsewhere and it would happen twice).

const stops: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const stop of stops.splice(0)) await stop();
});

/** A server whose Health/Check counts its calls and whose Health/List waits until released. */
async function countingServer(reservation: PortReservation, drainMs: number) {
  const config = loadConfig([], { GATEHOUSE_PORT: "0", GATEHOUSE_DATA_DIR: "/nonexistent" });
  let checks = 0;
  let listing = 0;
  let release = () => {};
  const released = new Promise<void>((resolve) => (release = resolve));
  const server = createServer({
    config,
    routes: (router) =>
      router.service(Health, {
        check: () => {
          checks += 1;
          return { status: HealthCheckResponse_ServingStatus.SERVING };
        },
        list: async () => {
          listing += 1;
          await released;
          return { statuses: {} };
        },
        watch: async function* () {},
      }),
    interceptors: [],
    isReady: () => true,
    metrics: createMetrics(),
    logger: createLogger("info", new LogCapture()),
  });
  const { port } = await server.listen(reservation);
  stops.push(async () => {
    release();
    await server.close(drainMs);
  });
  return { port, server, checks: () => checks, listing: () => listing, release };
}

const call = (method: string) => `POST /grpc.health.v1.Health/${method} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}`;

/** A raw client connection that records what it receives; `halfOpen`: it can write after the server's FIN. */
function rawConnection(port: number, halfOpen = false) {
  const socket = net.connect({ port, host: "127.0.0.1", allowHalfOpen: halfOpen });
  const state = { received: "", error: undefined as unknown };
  socket.setEncoding("utf8");
  socket.on("data", (chunk: string) => (state.received += chunk));
  socket.on("error", (error) => (state.error = error));
  return {
    socket,
    state,
    connected: new Promise((resolve) => socket.once("connect", resolve)),
    ended: new Promise((resolve) => socket.once("end", resolve)),
  };
}

it("a request whose first bytes arrive after the stop began, on a connection accepted before it, is answered", async () => {
  const reservation = await reservePort(0, "127.0.0.1");
  const late = rawConnection(reservation.port);
  await late.connected;
  // Accepted (held while the server starts) before the stop, silent until after it began.
  await eventually(() => new Promise<boolean>((resolve) => reservation.server.getConnections((_, count) => resolve(count === 1))), { what: "the connection to be accepted" });
  const { port, server, checks, listing, release } = await countingServer(reservation, 20_000);

  // Another connection's call keeps the drain open while the late request comes.
  const busy = rawConnection(port);
  busy.socket.write(call("List"));
  await eventually(() => listing() === 1, { what: "the other call to be in flight" });

  const started = Date.now();
  const stopping = server.close(20_000);
  late.socket.write(call("Check"));
  await late.ended;
  release();
  await stopping;

  expect(checks()).toBe(1);
  expect(late.state.received).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
  expect(late.state.received.toLowerCase()).toContain("\r\nconnection: close\r\n");
  expect(late.state.received).toMatch(/\r\n\r\n\{"status":"SERVING"\}$/);
  // Once both calls are answered the stop is done: no wait for its deadline.
  expect(Date.now() - started).toBeLessThan(10_000);
});

it("a request that crosses the stop's FIN on an idle keep-alive connection is not run", async () => {
  const { port, server, checks } = await countingServer(await reservePort(0, "127.0.0.1"), 1_000);
  const client = rawConnection(port, true);
  client.socket.write(call("Check"));
  await eventually(() => client.state.received.endsWith('{"status":"SERVING"}'), { what: "the first call's answer" });

  // The connection is idle: the stop ends it at once. The client's next request crosses the server's FIN.
  const stopping = server.close(1_000);
  await client.ended;
  client.socket.write(call("Check"));
  await stopping;

  expect(client.state.error).toBeUndefined();
  expect(checks()).toBe(1);
  expect(client.state.received.match(/HTTP\/1\.1 200/g)).toHaveLength(1);
});
