import type http from "node:http";
import type http2 from "node:http2";
import net from "node:net";

/** The first bytes of every cleartext HTTP/2 (prior knowledge) connection. */
const HTTP2_PREFACE = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");

/**
 * One cleartext listener for HTTP/1.1 and HTTP/2: Node's cleartext HTTP/2 server cannot fall back to HTTP/1.1, so
 * each connection's first bytes decide: the HTTP/2 preface goes to `h2c`, anything else to `http1` (after
 * `onHttp1`, which sees the socket first). A client that connects and sends nothing is dropped after
 * `firstBytesTimeoutMs`; from the first byte on, the HTTP servers' own timeouts apply.
 */
export function createOnePortListener(options: {
  http1: http.Server;
  h2c: http2.Http2Server;
  firstBytesTimeoutMs: number;
  onHttp1?: (socket: net.Socket) => void;
}): net.Server {
  const { http1, h2c } = options;
  return net.createServer((socket) => {
    // Peek: read the first chunk, put it back, and hand the socket to the server that speaks it.
    socket.once("data", (chunk: Buffer) => {
      socket.pause();
      socket.unshift(chunk);
      const isHttp2 = chunk.subarray(0, HTTP2_PREFACE.length).equals(HTTP2_PREFACE.subarray(0, Math.min(chunk.length, HTTP2_PREFACE.length)));
      if (isHttp2) {
        // No resume(): the HTTP/2 session reads the socket's handle itself, and a resumed JS
        // stream would steal bytes from it.
        h2c.emit("connection", socket);
      } else {
        options.onHttp1?.(socket);
        http1.emit("connection", socket);
        socket.resume();
      }
    });
    socket.setTimeout(options.firstBytesTimeoutMs, () => socket.destroy());
    socket.once("data", () => socket.setTimeout(0));
  });
}
