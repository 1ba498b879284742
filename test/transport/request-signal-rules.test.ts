import { createContextValues } from "@connectrpc/connect";
import type { UniversalServerRequest } from "@connectrpc/connect/protocol";
import http from "node:http";
import http2 from "node:http2";
import https from "node:https";
import type { AddressInfo } from "node:net";
import net from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { createAuthorityCheck, universalRequestOf } from "../../src/transport/node-request.js";
import { eventually } from "../support/eventually.js";
import { makeSelfSignedCertificate } from "../support/tls.js";

// src/transport/node-request.ts: what connect-es receives of each request (as connect-node's adapter would hand it),
// and the request's signal: aborted when the client goes away before its answer is complete, and — only once a call
// was answered in full — handed to a later call instead of a new one.

type Exchange = { request: UniversalServerRequest; answer(body?: string): void };

const closers: (() => void)[] = [];
afterEach(() => {
  for (const close of closers.splice(0)) close();
});

/** A server of either protocol that hands each request to `universalRequestOf` and waits for the test to answer. */
async function serve(kind: "http1" | "https" | "http2"): Promise<{ url: string; exchanges: Exchange[]; closed(): number; ca?: Buffer }> {
  const exchanges: Exchange[] = [];
  let closed = 0;
  const hostOf = createAuthorityCheck();
  const onRequest = (req: http.IncomingMessage | http2.Http2ServerRequest, res: http.ServerResponse | http2.Http2ServerResponse) => {
    const request = universalRequestOf(req, res, hostOf(req) ?? "refused.invalid", createContextValues());
    exchanges.push({ request, answer: (body = "ok") => res.end(body) });
    // On what the adapter listens to, after its own listener (added first): a count of closes counts signals already
    // given back or aborted.
    ("stream" in req ? req : res).once("close", () => void closed++);
  };
  const tls = kind === "https" ? makeSelfSignedCertificate() : undefined;
  const server =
    kind === "http2"
      ? http2.createServer(onRequest)
      : tls
        ? https.createServer({ cert: tls.ca, key: (await import("node:fs")).readFileSync(tls.keyPath) }, onRequest)
        : http.createServer(onRequest);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  closers.push(() => {
    if ("closeAllConnections" in server) server.closeAllConnections();
    server.close();
  });
  const { port } = server.address() as AddressInfo;
  return { url: `${kind === "https" ? "https" : "http"}://127.0.0.1:${port}`, exchanges, closed: () => closed, ...(tls ? { ca: tls.ca } : {}) };
}

async function bodyText(request: UniversalServerRequest): Promise<string> {
  const chunks: Uint8Array[] = [];
  for await (const chunk of request.body as AsyncIterable<Uint8Array>) chunks.push(chunk);
  return Buffer.concat(chunks).toString();
}

/** Sends one HTTP/1.1 request on `agent`'s connections; resolves with the answer's body. */
function post(url: string, agent: http.Agent | https.Agent, path: string, body: string, headers: Record<string, string | string[]> = {}): Promise<string> {
  const target = new URL(path, url);
  const send = target.protocol === "https:" ? https.request : http.request;
  return new Promise((resolve, reject) => {
    const req = send(target, { method: "POST", agent, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () => resolve(Buffer.concat(chunks).toString()));
    });
    req.on("error", reject);
    req.end(body);
  });
}

describe("what connect-es receives of a request", () => {
  it("HTTP/1.1: method, version, the URL from the authority and the path with its query, every header, the body", async () => {
    const { url, exchanges } = await serve("http1");
    const agent = new http.Agent({ keepAlive: true });
    closers.push(() => agent.destroy());
    const answered = post(url, agent, "/pkg.Service/Method?connect=v1&x=a%20b", "the body", { "x-many": ["one", "two"], "x-one": "1", "set-cookie": ["a=1", "b=2"] });
    await eventually(() => exchanges.length === 1, { what: "the request" });
    const { request, answer } = exchanges[0]!;
    expect(request.method).toBe("POST");
    expect(request.httpVersion).toBe("1.1");
    expect(request.url).toBe(`${url}/pkg.Service/Method?connect=v1&x=a%20b`);
    expect(new URL(request.url).searchParams.get("x")).toBe("a b");
    expect(request.header.get("x-one")).toBe("1");
    expect(request.header.get("x-many")).toBe("one, two");
    expect(request.header.get("host")).toBe(new URL(url).host);
    // The one request header node keeps as a list: each of its values, not the list printed as one.
    expect(request.header.getSetCookie()).toEqual(["a=1", "b=2"]);
    expect(await bodyText(request)).toBe("the body");
    answer();
    expect(await answered).toBe("ok");
  });

  it("HTTP/2: no pseudo-header among the headers, version 2.0, the URL from the :authority", async () => {
    const { url, exchanges } = await serve("http2");
    const session = http2.connect(url);
    closers.push(() => session.destroy());
    const stream = session.request({ ":method": "PUT", ":path": "/pkg.Service/Method", "x-one": "1" });
    stream.end("h2 body");
    stream.resume();
    await eventually(() => exchanges.length === 1, { what: "the request" });
    const { request, answer } = exchanges[0]!;
    expect(request.method).toBe("PUT");
    expect(request.httpVersion).toBe("2.0");
    expect(request.url).toBe(`${url}/pkg.Service/Method`);
    const names: string[] = [];
    request.header.forEach((_, name) => names.push(name));
    expect(names.filter((name) => name.startsWith(":"))).toEqual([]);
    expect(names).toContain("x-one");
    expect(request.header.get("x-one")).toBe("1");
    expect(await bodyText(request)).toBe("h2 body");
    answer();
  });

  it("over TLS, the URL says https", async () => {
    const { url, exchanges, ca } = await serve("https");
    const agent = new https.Agent({ ca });
    closers.push(() => agent.destroy());
    const answered = post(url, agent, "/pkg.Service/Method", "");
    await eventually(() => exchanges.length === 1, { what: "the request" });
    expect(exchanges[0]!.request.url).toBe(`${url}/pkg.Service/Method`);
    expect(url.startsWith("https://")).toBe(true);
    exchanges[0]!.answer();
    await answered;
  });
});

describe("the URL's host", () => {
  it("is the authority as a URL parser reads it: lower-cased and decoded, whatever path or query a Host header carries cut off", async () => {
    const { url, exchanges } = await serve("http1");
    const { hostname, port } = new URL(url);
    const hosts = ["x/other.Svc/Method?", "x?message=EVIL&", "x#", "X%41:8080", "[::1]:8080", "u:p@example.com", "a b"];
    for (const host of hosts) {
      const socket = net.connect({ host: hostname, port: Number(port) });
      socket.on("error", () => undefined);
      closers.push(() => socket.destroy());
      socket.write(`POST /pkg.Service/Method?q=1 HTTP/1.1\r\nhost: ${host}\r\ncontent-length: 0\r\n\r\n`);
    }
    // HTTP/1.0 needs no Host header; without one, no URL can be built either.
    const bare = net.connect({ host: hostname, port: Number(port) });
    bare.on("error", () => undefined);
    closers.push(() => bare.destroy());
    bare.write("POST /pkg.Service/Method?q=1 HTTP/1.0\r\ncontent-length: 0\r\n\r\n");
    await eventually(() => exchanges.length === hosts.length + 1, { what: "every request" });
    const seen = new Map(exchanges.map(({ request }) => [request.header.get("host"), request.url]));
    expect(Object.fromEntries(seen)).toEqual({
      "x/other.Svc/Method?": "http://x/pkg.Service/Method?q=1",
      "x?message=EVIL&": "http://x/pkg.Service/Method?q=1",
      "x#": "http://x/pkg.Service/Method?q=1",
      "X%41:8080": "http://xa:8080/pkg.Service/Method?q=1",
      "[::1]:8080": "http://[::1]:8080/pkg.Service/Method?q=1",
      "u:p@example.com": "http://example.com/pkg.Service/Method?q=1",
      // No URL can be built from it: the node adapter refuses the call (http.bad_host) before any request is made.
      "a b": "http://refused.invalid/pkg.Service/Method?q=1",
      null: "http://refused.invalid/pkg.Service/Method?q=1",
    });
  });
});

describe("a request's signal", () => {
  it("is aborted after a full answer, never handed on, while something still listens to it", async () => {
    const { url, exchanges, closed } = await serve("http1");
    const agent = new http.Agent({ keepAlive: true });
    closers.push(() => agent.destroy());
    const first = post(url, agent, "/a", "");
    await eventually(() => exchanges.length === 1, { what: "the first request" });
    const { signal } = exchanges[0]!.request;
    signal.addEventListener("abort", () => undefined);
    exchanges[0]!.answer();
    await first;
    await eventually(() => closed() === 1, { what: "the answer to close" });
    expect(signal.aborted).toBe(true);
    const second = post(url, agent, "/b", "");
    await eventually(() => exchanges.length === 2, { what: "the second request" });
    expect(exchanges[1]!.request.signal).not.toBe(signal);
    exchanges[1]!.answer();
    await second;
  });

  it("HTTP/1.1: a call answered in full leaves its signal unaborted, and the next call takes it", async () => {
    const { url, exchanges, closed } = await serve("http1");
    const agent = new http.Agent({ keepAlive: true });
    closers.push(() => agent.destroy());
    const first = post(url, agent, "/a", "");
    await eventually(() => exchanges.length === 1, { what: "the first request" });
    exchanges[0]!.answer();
    await first;
    await eventually(() => closed() === 1, { what: "the answer to close" });
    const second = post(url, agent, "/b", "");
    await eventually(() => exchanges.length === 2, { what: "the second request" });
    expect(exchanges[1]!.request.signal).toBe(exchanges[0]!.request.signal);
    expect(exchanges[1]!.request.signal.aborted).toBe(false);
    exchanges[1]!.answer();
    await second;
  });

  it("HTTP/1.1: a client that hangs up before its answer aborts the call's signal, which no later call gets", async () => {
    const { url, exchanges } = await serve("http1");
    const { hostname, port } = new URL(url);
    const socket = net.connect({ host: hostname, port: Number(port) });
    socket.on("error", () => undefined);
    // A body announced at 100 bytes that brings 5: the request's read breaks off when the connection goes.
    socket.write(`POST /a HTTP/1.1\r\nhost: ${hostname}:${port}\r\ncontent-length: 100\r\n\r\nhello`);
    await eventually(() => exchanges.length === 1, { what: "the request" });
    const signal = exchanges[0]!.request.signal;
    socket.destroy();
    await eventually(() => signal.aborted, { what: "the signal to be aborted" });
    // The body that broke off is the reason (node's "aborted", ECONNRESET), which ends the call as canceled.
    expect((signal.reason as NodeJS.ErrnoException).code).toBe("ECONNRESET");
    const agent = new http.Agent({ keepAlive: true });
    closers.push(() => agent.destroy());
    const next = post(url, agent, "/b", "");
    await eventually(() => exchanges.length === 2, { what: "the next request" });
    expect(exchanges[1]!.request.signal).not.toBe(signal);
    expect(exchanges[1]!.request.signal.aborted).toBe(false);
    exchanges[1]!.answer();
    await next;
  });

  it("HTTP/1.1: a client that hangs up after its whole request, before the answer, aborts the call's signal", async () => {
    const { url, exchanges } = await serve("http1");
    const { hostname, port } = new URL(url);
    const socket = net.connect({ host: hostname, port: Number(port) });
    socket.on("error", () => undefined);
    socket.write(`POST /a HTTP/1.1\r\nhost: ${hostname}:${port}\r\ncontent-length: 2\r\n\r\nhi`);
    await eventually(() => exchanges.length === 1, { what: "the request" });
    const { request } = exchanges[0]!;
    expect(await bodyText(request)).toBe("hi");
    socket.destroy();
    await eventually(() => request.signal.aborted, { what: "the signal to be aborted" });
  });

  it("HTTP/2: a stream the client resets before its answer aborts the call's signal; one answered in full passes it on", async () => {
    const { url, exchanges, closed } = await serve("http2");
    const session = http2.connect(url);
    closers.push(() => session.destroy());
    const open = (path: string) => {
      const stream = session.request({ ":method": "POST", ":path": path });
      stream.on("error", () => undefined);
      stream.end();
      stream.resume();
      return stream;
    };
    const reset = open("/reset");
    await eventually(() => exchanges.length === 1, { what: "the first request" });
    reset.close(http2.constants.NGHTTP2_CANCEL);
    await eventually(() => exchanges[0]!.request.signal.aborted, { what: "the reset call's signal to be aborted" });

    const answered = open("/answered");
    await eventually(() => exchanges.length === 2, { what: "the second request" });
    expect(exchanges[1]!.request.signal).not.toBe(exchanges[0]!.request.signal);
    exchanges[1]!.answer();
    await new Promise((resolve) => answered.once("close", resolve));
    await eventually(() => closed() === 2, { what: "both exchanges to close" });
    open("/next");
    await eventually(() => exchanges.length === 3, { what: "the third request" });
    expect(exchanges[2]!.request.signal).toBe(exchanges[1]!.request.signal);
    expect(exchanges[2]!.request.signal.aborted).toBe(false);
    exchanges[2]!.answer();
  });

  it("HTTP/2: a HEAD stream the client resets before its answer aborts the call's signal (node closes no response for it)", async () => {
    const { url, exchanges } = await serve("http2");
    const session = http2.connect(url);
    closers.push(() => session.destroy());
    const stream = session.request({ ":method": "HEAD", ":path": "/head" });
    stream.on("error", () => undefined);
    stream.end();
    await eventually(() => exchanges.length === 1, { what: "the request" });
    stream.close(http2.constants.NGHTTP2_CANCEL);
    await eventually(() => exchanges[0]!.request.signal.aborted, { what: "the signal to be aborted" });
    expect(exchanges[0]!.request.method).toBe("HEAD");
  });

  it("at most 256 signals wait for a next call: of 300 calls answered at once, the next 300 reuse 256", async () => {
    const { url, exchanges, closed } = await serve("http1");
    const agent = new http.Agent({ keepAlive: true, maxSockets: 300 });
    closers.push(() => agent.destroy());
    const batch = async (from: number) => {
      const answers = Array.from({ length: 300 }, (_, i) => post(url, agent, `/call-${from + i}`, ""));
      await eventually(() => exchanges.length === from + 300, { what: "every call of the batch", timeoutMs: 10_000 });
      for (const exchange of exchanges.slice(from)) exchange.answer();
      await Promise.all(answers);
    };
    await batch(0);
    await eventually(() => closed() === 300, { what: "every answer of the first batch to close" });
    await batch(300);
    const first = new Set(exchanges.slice(0, 300).map((exchange) => exchange.request.signal));
    expect(first.size).toBe(300);
    expect(exchanges.slice(300).filter((exchange) => first.has(exchange.request.signal))).toHaveLength(256);
  });
});
