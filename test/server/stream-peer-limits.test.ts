import http2 from "node:http2";
import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually } from "../support/eventually.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { envelope, errorInfoReasons } from "../fuzz/wire.js";

const WATCH = "/grpc.health.v1.Health/Watch";
const RESOURCE_EXHAUSTED = 8;

/** An h2c session whose socket is bound to `localAddress`: on Linux any 127.x address is loopback, so each is a peer of its own. */
function sessionFrom(baseUrl: string, localAddress: string): Promise<http2.ClientHttp2Session> {
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const session = http2.connect(baseUrl, { createConnection: () => net.connect({ host: url.hostname, port: Number(url.port), localAddress }) });
    session.once("connect", () => resolve(session));
    session.once("error", reject);
  });
}

type WatchOutcome = { open: true; stream: http2.ClientHttp2Stream } | { open: false; code: number; reasons: string[] };

/** Starts a gRPC Health.Watch; resolves when the first update arrives (open) or the call is refused. */
function watch(session: http2.ClientHttp2Session): Promise<WatchOutcome> {
  return new Promise((resolve, reject) => {
    const stream = session.request({ ":method": "POST", ":path": WATCH, "content-type": "application/grpc", te: "trailers" });
    const refused = (fields: http2.IncomingHttpHeaders) => {
      if (fields["grpc-status"] === undefined) return;
      resolve({ open: false, code: Number(fields["grpc-status"]), reasons: errorInfoReasons(fields["grpc-status-details-bin"] as string | undefined) });
    };
    stream.on("response", refused);
    stream.on("trailers", refused);
    stream.once("data", () => resolve({ open: true, stream }));
    stream.on("error", reject);
    stream.end(envelope(new Uint8Array()));
  });
}

describe("streaming calls are capped per remote address, below the server-wide cap", () => {
  let server: TestServer;
  const sessions: http2.ClientHttp2Session[] = [];
  beforeAll(async () => {
    server = await startTestServer({ config: { maxStreamingCalls: 10, maxStreamingCallsPerPeer: 3 } });
  });
  afterAll(async () => {
    for (const session of sessions) session.destroy();
    await server.dispose();
  });

  it("one peer gets its cap and then stream.peer_limit_reached, over any number of connections; another peer still gets slots", async () => {
    // Two connections from one address: the cap follows the address, not the connection.
    const first = await sessionFrom(server.url, "127.0.0.1");
    const second = await sessionFrom(server.url, "127.0.0.1");
    const other = await sessionFrom(server.url, "127.0.0.2");
    sessions.push(first, second, other);

    const held = [await watch(first), await watch(second), await watch(first)];
    expect(held.map((outcome) => outcome.open)).toEqual([true, true, true]);
    for (const session of [first, second]) {
      expect(await watch(session)).toEqual({ open: false, code: RESOURCE_EXHAUSTED, reasons: ["stream.peer_limit_reached"] });
    }

    const fromOther = await watch(other);
    expect(fromOther.open).toBe(true);

    // A slot the peer gives back is its own again.
    const released = held[0];
    if (released?.open) released.stream.close(http2.constants.NGHTTP2_CANCEL);
    // The server learns of the cancel asynchronously: a refused try in between holds no slot.
    await eventually(async () => (await watch(second)).open, { what: "the peer's released slot to be usable again", timeoutMs: 5_000 });
  });
});
