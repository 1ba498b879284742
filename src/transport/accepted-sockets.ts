import type net from "node:net";

/**
 * Every TCP socket the listener accepted, whatever protocol it came to speak, so a stop can end them all at
 * its deadline. Destroying an HTTP/2 session is not enough: after a graceful close (GOAWAY), Node only ends the
 * session's socket and waits for the peer's FIN, which a client keeping a stream open never sends.
 */
export function trackAcceptedSockets(listener: net.Server) {
  const sockets = new Set<net.Socket>();
  listener.on("connection", (socket: net.Socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  });
  return {
    destroyAll(): void {
      for (const socket of sockets) socket.destroy();
    },
  };
}
