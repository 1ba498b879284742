import { Code } from "@connectrpc/connect";
import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Health, HealthCheckResponse_ServingStatus } from "../../gen/grpc/health/v1/health_pb.js";
import { ServerReflection } from "../../gen/grpc/reflection/v1/reflection_pb.js";
import { Clients } from "../support/clients.js";
import { failure } from "../support/errors.js";
import { eventually } from "../support/eventually.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { connectH2, h2Request } from "../fuzz/wire.js";

describe("caps: HTTP/2 streams per connection, streaming calls server-wide", () => {
  let server: TestServer;
  let clients: Clients;
  beforeAll(async () => {
    server = await startTestServer({ config: { http2MaxConcurrentStreams: 7, maxStreamingCalls: 3 } });
    clients = new Clients(server.url);
  });
  afterAll(async () => {
    clients.close();
    await server.dispose();
  });

  it("advertises the configured SETTINGS_MAX_CONCURRENT_STREAMS instead of Node's 2^32-1", async () => {
    const session = await connectH2(server.url);
    try {
      if (session.remoteSettings.maxConcurrentStreams !== 7) await new Promise((resolve) => session.once("remoteSettings", resolve));
      expect(session.remoteSettings.maxConcurrentStreams).toBe(7);
    } finally {
      session.close();
    }
  });

  it("Health.Watch beyond the cap is resource_exhausted (stream.limit_reached); a freed slot is usable again", async () => {
    const health = clients.client(Health, "connect-json-http1");
    const watchers = Array.from({ length: 3 }, () => new AbortController());
    const first = await Promise.all(
      watchers.map(async (controller) => {
        const stream = health.watch({ service: "" }, { signal: controller.signal })[Symbol.asyncIterator]();
        return (await stream.next()).value?.status;
      }),
    );
    expect(first).toEqual([HealthCheckResponse_ServingStatus.SERVING, HealthCheckResponse_ServingStatus.SERVING, HealthCheckResponse_ServingStatus.SERVING]);

    const refused = await failure(
      (async () => {
        for await (const _ of health.watch({ service: "" })) return;
      })(),
    );
    expect(refused).toMatchObject({ code: Code.ResourceExhausted, reason: "stream.limit_reached" });
    // Unary calls are not counted.
    expect((await health.check({ service: "" })).status).toBe(HealthCheckResponse_ServingStatus.SERVING);

    watchers[0]?.abort();
    // The released slot is free again once the server saw the abort (a refused try in between is thrown away).
    await eventually(
      async () => {
        const controller = new AbortController();
        try {
          for await (const update of health.watch({ service: "" }, { signal: controller.signal })) return update.status === HealthCheckResponse_ServingStatus.SERVING;
          return false;
        } finally {
          controller.abort();
        }
      },
      { what: "a streaming slot to come free after one watcher left", timeoutMs: 5_000 },
    );
    for (const controller of watchers) controller.abort();
  });
});

describe("lifetimes: streaming calls and idle connections end by themselves", () => {
  let server: TestServer;
  let clients: Clients;
  beforeAll(async () => {
    server = await startTestServer({ config: { streamMaxLifetimeMs: 300, idleTimeoutMs: 300 } });
    clients = new Clients(server.url);
  });
  afterAll(async () => {
    clients.close();
    await server.dispose();
  });

  it("a Health.Watch stream over HTTP/1.1 ends with status OK after the maximum lifetime", async () => {
    const started = Date.now();
    const updates: number[] = [];
    for await (const update of clients.client(Health, "grpc-web-http1").watch({ service: "" })) updates.push(update.status);
    expect(updates).toEqual([HealthCheckResponse_ServingStatus.SERVING]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
  });

  it("a reflection stream whose client never closes its side ends after the maximum lifetime", async () => {
    let stopRequests = () => {};
    const requestsOpen = new Promise<void>((resolve) => {
      stopRequests = resolve;
    });
    async function* requests() {
      yield { host: "", messageRequest: { case: "listServices" as const, value: "" } };
      await requestsOpen;
    }
    const answers: string[] = [];
    try {
      for await (const response of clients.client(ServerReflection, "grpc-h2c").serverReflectionInfo(requests())) answers.push(response.messageResponse.case ?? "");
    } finally {
      stopRequests();
    }
    expect(answers).toEqual(["listServicesResponse"]);
  });

  it("an HTTP/1.1 keep-alive connection without a request is closed after the idle timeout", async () => {
    const url = new URL(server.url);
    const socket = net.connect(Number(url.port), url.hostname);
    const closed = new Promise<number>((resolve) => socket.once("close", () => resolve(Date.now())));
    let answered = 0;
    socket.on("data", (chunk: Buffer) => {
      if (chunk.toString().startsWith("HTTP/1.1 404")) answered = Date.now();
    });
    socket.write(`GET /nowhere HTTP/1.1\r\nHost: ${url.host}\r\nConnection: keep-alive\r\n\r\n`);
    const closedAt = await closed;
    expect(answered).toBeGreaterThan(0);
    expect(closedAt - answered).toBeLessThan(2_500);
  });

  it("an HTTP/2 session without a stream gets GOAWAY after the idle timeout", async () => {
    const session = await connectH2(server.url);
    const goaway = new Promise<number>((resolve) => session.once("goaway", () => resolve(Date.now())));
    session.on("error", () => undefined);
    const response = await h2Request(session, { method: "GET", path: "/nowhere" });
    const answered = Date.now();
    expect(response.status).toBe(404);
    expect((await goaway) - answered).toBeLessThan(2_500);
    session.destroy();
  });
});
