import http from "node:http";
import http2 from "node:http2";
import https from "node:https";
import net from "node:net";
import tls from "node:tls";
import { afterEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import { createServer, type GatehouseServer } from "../../src/server.js";
import { createLogger } from "../../src/support/logger.js";
import { createMetrics } from "../../src/support/metrics.js";
import { reservePort } from "../../src/transport/port-reservation.js";
import { eventually } from "../support/eventually.js";
import { LogCapture } from "../support/server.js";
import { makeSelfSignedCertificate } from "../support/tls.js";

// The answers outside the RPCs (server.ts createFallback): GET/HEAD /healthz says the process answers, /readyz
// whether it should get traffic (503 "not ready" otherwise), a path no route matches is 404 in the SPEC body,
// and connections that arrived while the server was starting are served once it listens.
// The server here has no RPC at all: only what server.ts itself answers.

const stops: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const stop of stops.splice(0)) await stop();
});

async function serve(options: { ready?: () => boolean; beforeListen?: (port: number) => Promise<void>; tls?: { certPath: string; keyPath: string } } = {}) {
  const config = { ...loadConfig([], { GATEHOUSE_PORT: "0", GATEHOUSE_DATA_DIR: "/nonexistent" }), ...(options.tls ? { tls: options.tls } : {}) };
  const logs = new LogCapture();
  const server: GatehouseServer = createServer({
    config,
    routes: () => undefined,
    interceptors: [],
    isReady: options.ready ?? (() => true),
    metrics: createMetrics(),
    logger: createLogger("info", logs),
  });
  const reservation = await reservePort(0, "127.0.0.1");
  await options.beforeListen?.(reservation.port);
  const { port } = await server.listen(reservation);
  stops.push(() => server.close(1_000));
  return { url: `http://127.0.0.1:${port}`, port, logs, server };
}

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** One HTTP/1.1 request on its own connection (no keep-alive), with a deadline: a request never answered fails. */
function request(url: string, method: string, path: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${url}${path}`, { method, agent: false, timeout: 5_000 }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => (body += chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on("timeout", () => req.destroy(new Error(`${method} ${path} was not answered`)));
    req.on("error", reject);
    req.end();
  });
}

describe("health URLs", () => {
  it("GET /healthz and /readyz answer 200 ok as plain text that no cache keeps, while the server is ready", async () => {
    const { url } = await serve();
    for (const path of ["/healthz", "/readyz"]) {
      const answer = await request(url, "GET", path);
      expect({ path, status: answer.status, body: answer.body }).toEqual({ path, status: 200, body: "ok\n" });
      expect(answer.headers["content-type"]).toBe("text/plain; charset=utf-8");
      expect(answer.headers["cache-control"]).toBe("no-store");
    }
  });

  it("HEAD on them answers the same status without a body", async () => {
    const { url } = await serve();
    for (const path of ["/healthz", "/readyz"]) {
      const answer = await request(url, "HEAD", path);
      expect({ path, status: answer.status, body: answer.body }).toEqual({ path, status: 200, body: "" });
      expect(answer.headers["content-type"]).toBe("text/plain; charset=utf-8");
    }
  });

  it("a query string does not change the probe", async () => {
    const { url } = await serve();
    expect((await request(url, "GET", "/healthz?verbose=1")).body).toBe("ok\n");
  });

  it("a server that should get no traffic answers /readyz 503 not ready, while /healthz still says the process answers", async () => {
    const { url } = await serve({ ready: () => false });
    const ready = await request(url, "GET", "/readyz");
    expect({ status: ready.status, body: ready.body }).toEqual({ status: 503, body: "not ready\n" });
    expect(ready.headers["cache-control"]).toBe("no-store");
    expect(ready.headers["content-type"]).toBe("text/plain; charset=utf-8");
    const head = await request(url, "HEAD", "/readyz");
    expect({ status: head.status, body: head.body }).toEqual({ status: 503, body: "" });
    const alive = await request(url, "GET", "/healthz");
    expect({ status: alive.status, body: alive.body }).toEqual({ status: 200, body: "ok\n" });
  });

  it("readiness is asked at each probe, not once", async () => {
    let ready = false;
    const { url } = await serve({ ready: () => ready });
    expect((await request(url, "GET", "/readyz")).status).toBe(503);
    ready = true;
    expect((await request(url, "GET", "/readyz")).status).toBe(200);
  });

  it("other methods and other paths are no probes", async () => {
    const { url } = await serve();
    expect((await request(url, "POST", "/healthz")).status).toBe(404);
    expect((await request(url, "DELETE", "/readyz")).status).toBe(404);
    expect((await request(url, "GET", "/healthz/more")).status).toBe(404);
    expect((await request(url, "GET", "/")).status).toBe(404);
  });
});

describe("paths no route matches", () => {
  it("are 404 in the SPEC body naming the method and path, with ErrorInfo route.not_found", async () => {
    const { url } = await serve();
    const answer = await request(url, "GET", "/v1/nowhere?x=1");
    expect(answer.status).toBe(404);
    expect(answer.headers["content-type"]).toBe("application/json");
    expect(JSON.parse(answer.body)).toEqual({
      code: 5,
      message: "no route for GET /v1/nowhere",
      details: [{ "@type": "type.googleapis.com/google.rpc.ErrorInfo", reason: "route.not_found", domain: "gatehouse", metadata: {} }],
    });
  });

  it("a path that is no URL at all (`//`) is 404 too, never an internal error", async () => {
    const { url, logs } = await serve();
    const answer = await request(url, "GET", "//");
    expect(answer.status).toBe(404);
    expect(JSON.parse(answer.body)).toMatchObject({ code: 5, message: "no route for GET //" });
    expect(logs.text).not.toContain("internal error");
  });
});

/** Everything the server sends on `socket` until it ends the connection; fails with `never` after 5 s. */
function answerOf(socket: net.Socket, never: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = "";
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => (text += chunk));
    socket.on("end", () => resolve(text));
    socket.on("error", reject);
    socket.setTimeout(5_000, () => socket.destroy(new Error(never)));
  });
}

describe("connections that arrive while the server starts", () => {
  it("are held and answered once it listens", async () => {
    let early: Promise<string> | undefined;
    const { url } = await serve({
      beforeListen: async (port) => {
        const socket = net.connect(port, "127.0.0.1");
        await new Promise((resolve) => socket.once("connect", resolve));
        socket.write("GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
        early = answerOf(socket, "the early connection was never answered");
      },
    });
    const text = await early!;
    expect(text).toMatch(/^HTTP\/1\.1 200 /);
    expect(text).toMatch(/\r\n\r\n(3\r\n)?ok\n/);
    // And the server goes on accepting new connections.
    expect((await request(url, "GET", "/healthz")).status).toBe(200);
  });

  it("over TLS too: the held connection's handshake and request are answered once it listens", async () => {
    const certificate = makeSelfSignedCertificate();
    let early: Promise<string> | undefined;
    await serve({
      tls: certificate,
      beforeListen: async (port) => {
        const socket = tls.connect({ port, host: "127.0.0.1", ca: certificate.ca, servername: "localhost", ALPNProtocols: ["http/1.1"] });
        socket.write("GET /readyz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
        early = answerOf(socket, "the early TLS connection was never answered");
      },
    });
    const text = await early!;
    expect(text).toMatch(/^HTTP\/1\.1 200 /);
    expect(text).toMatch(/\r\n\r\n(3\r\n)?ok\n/);
  });

  it("over TLS with HTTP/2 (ALPN h2): the held session's stream is answered once it listens", async () => {
    const certificate = makeSelfSignedCertificate();
    let early: Promise<{ status: number; body: string }> | undefined;
    let session: http2.ClientHttp2Session | undefined;
    await serve({
      tls: certificate,
      beforeListen: async (port) => {
        session = http2.connect(`https://localhost:${port}`, { ca: certificate.ca });
        session.on("error", () => undefined);
        const stream = session.request({ ":method": "GET", ":path": "/healthz" });
        early = new Promise((resolve, reject) => {
          let status = 0;
          let body = "";
          stream.on("response", (headers) => (status = Number(headers[":status"])));
          stream.on("data", (chunk: Buffer) => (body += chunk.toString("utf8")));
          stream.on("end", () => resolve({ status, body }));
          stream.on("error", reject);
          stream.setTimeout(5_000, () => stream.destroy(new Error("the early HTTP/2 stream was never answered")));
        });
        stream.end();
      },
    });
    try {
      expect(await early!).toEqual({ status: 200, body: "ok\n" });
    } finally {
      session?.destroy();
    }
  });

});

describe("one port for HTTP/1.1 and cleartext HTTP/2", () => {
  it("recognizes the HTTP/2 preface also when its first TCP segment carries only part of it", async () => {
    const { port } = await serve();
    // A proxy that sends the client's first bytes in two segments: 5 bytes of the preface, then the rest.
    const proxy = net.createServer((client) => {
      const upstream = net.connect(port, "127.0.0.1");
      let first = true;
      // In order: later chunks wait for the delayed rest of the first one.
      let sent = Promise.resolve();
      client.on("data", (chunk: Buffer) => {
        if (!first) {
          sent = sent.then(() => void upstream.write(chunk));
          return;
        }
        first = false;
        upstream.write(chunk.subarray(0, 5));
        sent = new Promise((resolve) => setTimeout(resolve, 50)).then(() => void upstream.write(chunk.subarray(5)));
      });
      upstream.pipe(client);
      client.on("error", () => upstream.destroy());
      upstream.on("error", () => client.destroy());
    });
    await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
    const session = http2.connect(`http://127.0.0.1:${(proxy.address() as net.AddressInfo).port}`);
    session.on("error", () => undefined);
    try {
      const status = await new Promise<number>((resolve, reject) => {
        const stream = session.request({ ":method": "GET", ":path": "/healthz" });
        let code = 0;
        stream.on("response", (headers) => (code = Number(headers[":status"])));
        stream.on("end", () => resolve(code));
        stream.on("error", reject);
        stream.setTimeout(5_000, () => stream.destroy(new Error("no answer over HTTP/2")));
        stream.resume();
        stream.end();
      });
      expect(status).toBe(200);
    } finally {
      session.destroy();
      proxy.close();
    }
  });
});

describe("a graceful stop", () => {
  // GatehouseServer.close promises to close every connection after timeoutMs; an h2c client that keeps its side of
  // a stream open never answers the GOAWAY's FIN, so the socket itself must be destroyed at the deadline.
  it.each(["h2c", "h2 over TLS"])("ends at its deadline even when a client keeps a stream open (%s)", async (protocol) => {
    const certificate = protocol === "h2c" ? undefined : makeSelfSignedCertificate();
    const { port, server } = await serve(certificate ? { tls: certificate } : {});
    const session = certificate ? http2.connect(`https://localhost:${port}`, { ca: certificate.ca }) : http2.connect(`http://127.0.0.1:${port}`);
    session.on("error", () => undefined);
    try {
      // The client never ends its side of the stream: the session stays open through the drain.
      const stream = session.request({ ":method": "POST", ":path": "/healthz" });
      stream.on("error", () => undefined);
      stream.write("x");
      await new Promise((resolve) => stream.once("response", resolve));
      const outcome = await Promise.race([server.close(500).then(() => "closed"), new Promise((resolve) => setTimeout(() => resolve("still waiting"), 5_000))]);
      expect(outcome).toBe("closed");
    } finally {
      session.destroy();
    }
  });

  it("after HTTP/2 requests (h2c) completes at once: their streams are no HTTP/1.1 requests in flight", async () => {
    const { url, server } = await serve();
    const session = http2.connect(url);
    session.on("error", () => undefined);
    try {
      for (let i = 0; i < 2; i++) {
        const status = await new Promise<number>((resolve, reject) => {
          const stream = session.request({ ":method": "GET", ":path": "/healthz" });
          let code = 0;
          stream.on("response", (headers) => (code = Number(headers[":status"])));
          stream.on("end", () => resolve(code));
          stream.on("error", reject);
          stream.resume();
          stream.end();
        });
        expect(status).toBe(200);
      }
      session.close();
      const started = Date.now();
      await server.close(10_000);
      expect(Date.now() - started).toBeLessThan(5_000);
    } finally {
      session.destroy();
    }
  });

  it("closes an idle cleartext HTTP/1.1 keep-alive connection at once instead of waiting out the drain timeout", async () => {
    const { url, server } = await serve();
    const agent = new http.Agent({ keepAlive: true });
    try {
      let socketClosed = false;
      const status = await new Promise<number>((resolve, reject) => {
        const req = http.request(`${url}/healthz`, { agent }, (res) => {
          res.resume();
          res.on("end", () => resolve(res.statusCode ?? 0));
        });
        req.on("socket", (socket) => socket.once("close", () => (socketClosed = true)));
        req.on("error", reject);
        req.end();
      });
      expect(status).toBe(200);
      const started = Date.now();
      await server.close(10_000);
      expect(Date.now() - started).toBeLessThan(5_000);
      await eventually(() => socketClosed, { what: "the idle connection to be closed" });
    } finally {
      agent.destroy();
    }
  });

  it("over TLS closes an idle HTTP/1.1 keep-alive connection at once instead of waiting out the drain timeout", async () => {
    const certificate = makeSelfSignedCertificate();
    const { port, server } = await serve({ tls: certificate });
    const agent = new https.Agent({ keepAlive: true, ca: certificate.ca });
    try {
      const status = await new Promise<number>((resolve, reject) => {
        const req = https.request({ host: "127.0.0.1", port, path: "/healthz", servername: "localhost", agent }, (res) => {
          res.resume();
          res.on("end", () => resolve(res.statusCode ?? 0));
        });
        req.on("error", reject);
        req.end();
      });
      expect(status).toBe(200);
      const started = Date.now();
      await server.close(10_000);
      expect(Date.now() - started).toBeLessThan(5_000);
    } finally {
      agent.destroy();
    }
  });
});
