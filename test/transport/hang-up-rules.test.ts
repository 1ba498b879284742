import net from "node:net";
import { afterEach, describe, expect, it, vi } from "vitest";
import { envelope, http1Request, useWireConnections } from "../fuzz/wire.js";
import { eventually } from "../support/eventually.js";
import { useTestServer } from "../support/server.js";

// node-adapter.ts: "The client went away or reset the stream: nothing to answer, nothing the server did wrong" —
// a response that cannot be delivered because the client hung up is neither a warning nor a console.error with a
// stack (anyone could trigger those at will), and the server goes on serving.
const t = useTestServer();
const wire = useWireConnections(() => t.server);
afterEach(() => {
  vi.restoreAllMocks();
});

/** Starts a Connect Health.Watch over HTTP/1.1 on a raw socket; resolves once the first update arrived. */
async function watchOnRawSocket(requestId: string): Promise<net.Socket> {
  const url = new URL(t.server.url);
  const socket = net.connect({ host: url.hostname, port: Number(url.port) });
  socket.on("error", () => undefined);
  const request = envelope(Buffer.from("{}"));
  socket.write(
    `POST /grpc.health.v1.Health/Watch HTTP/1.1\r\nhost: ${url.host}\r\ncontent-type: application/connect+json\r\nx-request-id: ${requestId}\r\ncontent-length: ${request.byteLength}\r\n\r\n`,
  );
  socket.write(request);
  await new Promise((resolve) => socket.once("data", resolve));
  return socket;
}

describe("a client that hangs up in the middle of a stream", () => {
  it("is no warning and no console.error; the server answers the next call", async () => {
    const consoleError = vi.spyOn(console, "error");
    const requestId = `hang-up-${Date.now()}`;
    const socket = await watchOnRawSocket(requestId);
    socket.destroy();
    const entriesOf = () => t.server.logs.parsed().filter((entry) => entry.requestId === requestId);
    // The call ends when the server sees the hang-up (its log line); the failed delivery comes right after it.
    await eventually(() => entriesOf().some((entry) => entry.msg === "rpc"), { what: "the watch to end", timeoutMs: 5_000 });
    const next = await http1Request(t.server.url, wire.agent, { path: "/grpc.health.v1.Health/Check", headers: { "content-type": "application/json" }, body: "{}" });
    expect(next.status).toBe(200);
    expect(entriesOf().filter((entry) => (entry.level as number) >= 40)).toEqual([]);
    expect(consoleError).not.toHaveBeenCalled();
  });
});
