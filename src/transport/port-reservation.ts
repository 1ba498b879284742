import net from "node:net";

/**
 * The listening port, bound before anything else happens at start-up: a taken port fails the start
 * before the data dir, the database or a token file is touched. Connections that arrive while the
 * server is still starting are held (paused) and handed to it once it serves.
 */
export interface PortReservation {
  readonly port: number;
  readonly server: net.Server;
  /** The connections accepted so far; each is handed over exactly once. */
  takeHeld(): net.Socket[];
  /** Gives the port back (a start that failed after binding). */
  release(): Promise<void>;
}

export function reservePort(port: number, host: string): Promise<PortReservation> {
  const held = new Map<net.Socket, () => void>();
  const server = net.createServer({ pauseOnConnect: true }, (socket) => {
    const forget = () => held.delete(socket);
    held.set(socket, forget);
    socket.once("close", forget);
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve({
        port: (server.address() as net.AddressInfo).port,
        server,
        takeHeld() {
          const sockets = [...held.keys()];
          // Stryker disable next-line StringLiteral: the listener left behind would only delete from the emptied map
          for (const [socket, forget] of held) socket.off("close", forget);
          held.clear();
          return sockets;
        },
        release() {
          for (const socket of held.keys()) socket.destroy();
          return new Promise((done) => server.close(() => done()));
        },
      });
    });
  });
}
