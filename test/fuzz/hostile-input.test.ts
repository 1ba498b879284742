import http from "node:http";
import type http2 from "node:http2";
import v8 from "node:v8";
import vm from "node:vm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Health, HealthCheckResponse_ServingStatus } from "../../gen/grpc/health/v1/health_pb.js";
import { Clients } from "../support/clients.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { type HostileInput, nextInput } from "./hostile-inputs.js";
import { Rng } from "./random-messages.js";
import { connectH2, grpcStatus, h2Request, http1Request, type WireResponse } from "./wire.js";

/**
 * Hostile input never ends in 5xx, internal, unknown or data_loss, cannot stall the server and
 * cannot grow its memory without bound. GATEHOUSE_FUZZ_SEED reproduces a run (the seed is printed),
 * GATEHOUSE_FUZZ_INPUTS changes how many inputs one run sends (20 000 by default).
 */
const SEED = Number(process.env.GATEHOUSE_FUZZ_SEED ?? Math.floor(Math.random() * 2 ** 31));
const INPUTS = Number(process.env.GATEHOUSE_FUZZ_INPUTS ?? 20_000);
const CONCURRENCY = 32;
/** An input without an answer for this long stalled the server (generous: CI runs other suites beside it). */
const STALL_MS = 30_000;
const RSS_GROWTH_LIMIT = 200 * 1024 * 1024;
/** gRPC codes that blame the server: unknown, internal, data_loss. */
const SERVER_FAULT_CODES = new Set([2, 13, 15]);
const SERVER_FAULT_NAMES = new Set(["unknown", "internal", "data_loss"]);

/** A full garbage collection, so RSS is compared after what could be freed was freed. */
function collectGarbage(): void {
  v8.setFlagsFromString("--expose-gc");
  (vm.runInNewContext("gc") as () => void)();
}

/** The Connect streaming end-of-stream message (flag 0x02) of a 200 answer, if it reports an error. */
function connectStreamErrorCode(body: Buffer): string | undefined {
  let offset = 0;
  while (offset + 5 <= body.length) {
    const flags = body.readUInt8(offset);
    const length = body.readUInt32BE(offset + 1);
    if (flags & 0x02) {
      try {
        return (JSON.parse(body.subarray(offset + 5, offset + 5 + length).toString()) as { error?: { code?: string } }).error?.code;
      } catch {
        return "unparsable end-stream";
      }
    }
    offset += 5 + length;
  }
  return undefined;
}

/** Why this answer blames the server, or undefined when it does not. */
function serverFault(response: WireResponse, input: HostileInput): string | undefined {
  // The deadline the request itself set ran out (a generated timeout of a few milliseconds on a call that hashes a
  // password): Connect answers deadline_exceeded with 504 — the caller's choice, as for gRPC, not a server fault.
  const ownDeadline = input.request.headers?.["connect-timeout-ms"] !== undefined && response.status === 504 && /"code":"deadline_exceeded"/.test(response.body.toString("utf8"));
  if (response.status >= 500 && !ownDeadline) return `HTTP ${response.status} ${response.body.toString("utf8").slice(0, 200)}`;
  const contentType = String(response.headers["content-type"] ?? "");
  if (contentType.startsWith("application/grpc")) {
    const status = grpcStatus(response);
    if (status.code !== undefined && SERVER_FAULT_CODES.has(status.code)) return `grpc-status ${status.code} ${status.message ?? ""}`;
  }
  if (contentType.startsWith("application/connect+")) {
    const code = connectStreamErrorCode(response.body);
    if (code && SERVER_FAULT_NAMES.has(code)) return `connect end-stream ${code}`;
  }
  return undefined;
}

function describeInput(index: number, input: HostileInput): string {
  const body = input.request.body === undefined ? "" : Buffer.from(input.request.body).subarray(0, 120).toString("base64");
  return `#${index} ${input.kind} ${input.transport} ${input.request.method ?? "POST"} ${input.request.path.slice(0, 120)} ${JSON.stringify({ ...input.request.headers, authorization: input.request.headers?.authorization ? "[set]" : undefined })} body(b64)=${body}`;
}

describe("hostile-input fuzz over real sockets (seeded)", () => {
  let server: TestServer;
  let agent: http.Agent;
  let session: http2.ClientHttp2Session;
  beforeAll(async () => {
    // Valid Health.Watch and reflection calls are long-lived by design: a short lifetime ends them.
    server = await startTestServer({ config: { streamMaxLifetimeMs: 2_000 } });
    agent = new http.Agent({ keepAlive: true, maxSockets: 16 });
    session = await connectH2(server.url);
    session.on("error", () => undefined);
  });
  afterAll(async () => {
    agent.destroy();
    session.destroy();
    await server.dispose();
  });

  it(`answers ${INPUTS} generated hostile inputs without a server fault, stays alive and bounded in memory`, { timeout: 180_000 }, async () => {
    console.log(`hostile-input fuzz: seed ${SEED} (GATEHOUSE_FUZZ_SEED=${SEED} reproduces), ${INPUTS} inputs`);
    const rng = new Rng(SEED);
    const faults: string[] = [];
    const outcomes = { answered: 0, reset: 0, unsendable: 0 };
    const started = Date.now();

    // The HTTP/2 session may be closed by the server (GOAWAY on a protocol error): open a new one then.
    const h2 = async () => {
      if (session.closed || session.destroyed) {
        session = await connectH2(server.url);
        session.on("error", () => undefined);
      }
      return session;
    };

    // Inputs are made one at a time, in order, so the same seed gives the same inputs.
    let next = 0;
    const worker = async (until: number) => {
      while (next < until) {
        const index = next++;
        const input = nextInput(rng, server.adminToken);
        try {
          const response = input.transport === "h1" ? await http1Request(server.url, agent, input.request, STALL_MS) : await h2Request(await h2(), input.request, STALL_MS);
          outcomes.answered++;
          const fault = serverFault(response, input);
          if (fault) faults.push(`${fault}\n    ${describeInput(index, input)}`);
        } catch (error) {
          const code = (error as NodeJS.ErrnoException).code ?? "";
          const message = (error as Error).message;
          // Node's own clients refuse to send some inputs (a bad method name or header value).
          if (code.startsWith("ERR_INVALID") || code.startsWith("ERR_HTTP2_INVALID") || code === "ERR_UNESCAPED_CHARACTERS") outcomes.unsendable++;
          else if (message.startsWith("no answer within")) faults.push(`stalled: ${message}\n    ${describeInput(index, input)}`);
          // The server may reset a stream or close a connection it cannot parse (Node's HTTP/1.1 parser
          // answers an unknown method with 400 and closes, often before the client reads it): no fault.
          else outcomes.reset++;
        }
      }
    };
    // A first tenth warms up what is allocated once (JIT code, pools, caches, allocator arenas); the
    // baseline after it makes the bound about growth that stays, not about the first allocations.
    const warmUp = Math.floor(INPUTS / 10);
    let rssBefore = 0;
    await Promise.all(Array.from({ length: CONCURRENCY }, () => worker(warmUp)));
    collectGarbage();
    rssBefore = process.memoryUsage().rss;
    await Promise.all(Array.from({ length: CONCURRENCY }, () => worker(INPUTS)));

    collectGarbage();
    const rssGrowth = process.memoryUsage().rss - rssBefore;
    console.log(
      `hostile-input fuzz: ${outcomes.answered} answered, ${outcomes.reset} reset, ${outcomes.unsendable} not sendable, ${faults.length} server faults in ${Date.now() - started} ms; RSS growth ${Math.round(rssGrowth / 1024 / 1024)} MB`,
    );
    expect(faults.slice(0, 20), `seed ${SEED}: ${faults.length} server faults`).toEqual([]);
    expect(outcomes.answered).toBeGreaterThan(INPUTS * 0.9);
    expect(rssGrowth).toBeLessThan(RSS_GROWTH_LIMIT);

    const clients = new Clients(server.url);
    try {
      const health = clients.client(Health, "grpc-h2c");
      expect((await health.check({ service: "" })).status).toBe(HealthCheckResponse_ServingStatus.SERVING);
    } finally {
      clients.close();
    }
  });
});
