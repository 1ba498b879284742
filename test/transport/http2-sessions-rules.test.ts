import http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { createHttp2Sessions } from "../../src/transport/http2-sessions.js";
import { eventually } from "../support/eventually.js";

// http2-sessions.ts: a session without an open stream is closed with GOAWAY after the idle timeout, never one
// with a stream open (its timer starts again when the last stream closes); a graceful stop GOAWAYs every session
// (closeAll), a forced one destroys them (destroyAll); a closed session is no longer tracked.
// Long enough for a loaded machine to open a stream before it, short enough for a quick test.
const IDLE_MS = 1_000;
const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

/** An h2c server whose sessions are tracked; requests to /hold are answered only when `release` is called. */
async function serve(idleTimeoutMs = IDLE_MS) {
  const sessions = createHttp2Sessions({ idleTimeoutMs });
  const held: http2.ServerHttp2Stream[] = [];
  const server = http2.createServer();
  server.on("session", (session) => sessions.track(session));
  server.on("stream", (stream, headers) => {
    if (headers[":path"] === "/hold") held.push(stream);
    else stream.respond({ ":status": 200 }, { endStream: true });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const clients: http2.ClientHttp2Session[] = [];
  cleanups.push(() => {
    for (const client of clients) client.destroy();
    sessions.destroyAll();
    server.close();
  });
  const connect = async () => {
    const client = http2.connect(url);
    client.on("error", () => undefined);
    clients.push(client);
    await new Promise((resolve) => client.once("connect", resolve));
    return client;
  };
  const closed = (client: http2.ClientHttp2Session) => new Promise<void>((resolve) => (client.closed ? resolve() : client.once("close", () => resolve())));
  const release = () => {
    for (const stream of held.splice(0)) stream.respond({ ":status": 200 }, { endStream: true });
  };
  return { sessions, connect, closed, release, held };
}

/** A request that completes; resolves with its status. */
function get(client: http2.ClientHttp2Session, path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const stream = client.request({ ":path": path });
    stream.on("response", (headers) => resolve(Number(headers[":status"])));
    stream.on("error", reject);
    stream.on("close", () => reject(new Error(`the stream closed without an answer (code ${stream.rstCode})`)));
    stream.resume();
    stream.end();
  });
}

describe("idle sessions", () => {
  it("a session without a stream is closed after the idle timeout; one with a stream open stays until its stream ends", async () => {
    const t = await serve();
    const busy = await t.connect();
    let busyGoaway = false;
    busy.on("goaway", () => {
      busyGoaway = true;
    });
    const pending = get(busy, "/hold");
    await eventually(() => t.held.length === 1, { what: "the held stream to reach the server", timeoutMs: 5_000 });
    const idle = await t.connect();
    await t.closed(idle);
    // The idle one went after the timeout; the busy one, older, is still open.
    expect(busyGoaway).toBe(false);
    expect(busy.closed || busy.destroyed).toBe(false);
    await eventually(() => t.sessions.size === 1, { what: "the server to forget the idle session only", timeoutMs: 5_000 });
    t.release();
    expect(await pending).toBe(200);
    await t.closed(busy);
    await eventually(() => t.sessions.size === 0, { what: "the server to forget the closed session", timeoutMs: 5_000 });
  });

  it("a session is used again before the timeout: it stays open while in use, and is closed when idle again", async () => {
    const t = await serve();
    const client = await t.connect();
    expect(await get(client, "/")).toBe(200);
    expect(await get(client, "/")).toBe(200);
    await t.closed(client);
    await eventually(() => t.sessions.size === 0, { what: "the server to forget the closed session", timeoutMs: 5_000 });
  });
});

describe("stopping", () => {
  it("closeAll sends GOAWAY to every session: an open stream still finishes, then the session closes", async () => {
    const t = await serve(60_000);
    const first = await t.connect();
    const second = await t.connect();
    const pending = get(first, "/hold");
    await eventually(() => t.held.length === 1 && t.sessions.size === 2, { what: "both sessions and the held stream", timeoutMs: 5_000 });
    const goaway = new Promise((resolve) => first.once("goaway", resolve));
    t.sessions.closeAll();
    await goaway;
    await t.closed(second);
    t.release();
    expect(await pending).toBe(200);
    await t.closed(first);
    await eventually(() => t.sessions.size === 0, { what: "the server to see both sessions closed", timeoutMs: 5_000 });
  });

  it("destroyAll ends every session at once, also with a stream open", async () => {
    const t = await serve(60_000);
    const client = await t.connect();
    const pending = get(client, "/hold").catch((error: unknown) => error);
    await eventually(() => t.held.length === 1, { what: "the held stream", timeoutMs: 5_000 });
    t.sessions.destroyAll();
    await t.closed(client);
    expect(await pending).toBeInstanceOf(Error);
    await eventually(() => t.sessions.size === 0, { what: "the server to forget the destroyed session", timeoutMs: 5_000 });
  });
});
