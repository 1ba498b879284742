import net from "node:net";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { describe, expect, it } from "vitest";
import { trackAcceptedSockets } from "../../src/transport/accepted-sockets.js";
import { eventually } from "../support/eventually.js";

// accepted-sockets.ts: every socket the listener accepted is ended at a stop's deadline — and only while it is open:
// a socket that closed is forgotten, so a server that runs for months does not hold every connection it ever had.
setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

describe("the accepted sockets", () => {
  it("a socket that closed is forgotten (it can be garbage-collected); an open one is ended by destroyAll", async () => {
    const listener = net.createServer();
    const tracked = trackAcceptedSockets(listener);
    const accepted: WeakRef<net.Socket>[] = [];
    const serverClosed: Promise<unknown>[] = [];
    listener.on("connection", (socket: net.Socket) => {
      accepted.push(new WeakRef(socket));
      serverClosed.push(new Promise((resolve) => socket.once("close", resolve)));
    });
    await new Promise<void>((resolve) => listener.listen(0, "127.0.0.1", resolve));
    const { port } = listener.address() as net.AddressInfo;
    const connect = () =>
      new Promise<net.Socket>((resolve, reject) => {
        const client = net.connect({ host: "127.0.0.1", port }, () => resolve(client));
        client.once("error", reject);
      });
    try {
      for (let i = 0; i < 10; i++) (await connect()).destroy();
      await eventually(() => serverClosed.length === 10, { what: "ten connections accepted", timeoutMs: 5_000 });
      await Promise.all(serverClosed);
      await eventually(
        () => {
          gc();
          return accepted.every((ref) => ref.deref() === undefined);
        },
        { what: "the closed sockets to be collected", timeoutMs: 5_000 },
      );

      const open = await connect();
      const ended = new Promise((resolve) => open.once("close", resolve));
      await eventually(() => serverClosed.length === 11, { what: "the open connection accepted", timeoutMs: 5_000 });
      tracked.destroyAll();
      await ended;
      expect(open.destroyed).toBe(true);
    } finally {
      await new Promise((resolve) => listener.close(resolve));
    }
  });
});
