import type { connectNodeAdapter } from "@connectrpc/connect-node";
import type net from "node:net";

/** A request handler for both node:http and node:http2 (compatibility API) servers. */
type Handler = ReturnType<typeof connectNodeAdapter>;

/**
 * HTTP/1.1 sockets and the requests in flight on each, so a graceful stop can close every socket the
 * moment it is idle — cleartext or TLS alike (Node's closeIdleConnections covers neither a server
 * that never listened nor HTTP/1.1 inside an HTTP/2 secure server).
 */
export function createHttp1Connections() {
  const inFlight = new Map<net.Socket, number>();
  let draining = false;
  // end(), not destroy(): a response just written may still sit in the socket's buffer.
  const endIfIdle = (socket: net.Socket) => {
    if ((inFlight.get(socket) ?? 0) === 0) socket.end();
  };

  return {
    /**
     * A socket is added once its first bytes came (TLS: once its handshake is done). While draining, those bytes are
     * a request on a connection accepted before the stop: it is served (answered with `Connection: close`) within the
     * drain, not cut off — ending the socket here would run the request and lose its answer.
     */
    add(socket: net.Socket): void {
      inFlight.set(socket, 0);
      socket.once("close", () => inFlight.delete(socket));
    },

    /** Wraps the request handler to count HTTP/1 requests per socket; draining answers `Connection: close`. */
    track(handler: Handler): Handler {
      return (req, res) => {
        const socket = req.socket;
        // Stryker disable next-line LogicalOperator: every HTTP/1 socket is added (cleartext at its first bytes, TLS at secureConnection) before its first request
        if (req.httpVersionMajor === 1 && inFlight.has(socket)) {
          inFlight.set(socket, (inFlight.get(socket) ?? 0) + 1);
          if (draining) res.setHeader("connection", "close");
          res.once("close", () => {
            if (!inFlight.has(socket)) return;
            // Stryker disable next-line LogicalOperator: `&& 1` differs only with two requests in flight on one socket (HTTP/1.1 pipelining) while draining; not worth a test
            inFlight.set(socket, (inFlight.get(socket) ?? 1) - 1);
            if (draining) endIfIdle(socket);
          });
        }
        handler(req, res);
      };
    },

    /** From now on, every socket closes as soon as it has no request in flight. */
    drain(): void {
      draining = true;
      for (const socket of inFlight.keys()) endIfIdle(socket);
    },

    // What the drain has not closed by its deadline is destroyed with every other accepted socket (accepted-sockets.ts).
    get open(): number {
      return inFlight.size;
    },
  };
}
