import net from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { type PortReservation, reservePort } from "../../src/transport/port-reservation.js";

// port-reservation.ts: the port is bound before anything else at start-up; connections that arrive meanwhile are
// held and handed over exactly once; a connection that is gone by then is not handed over; release() gives the
// port back and drops what is still held.
const reservations: PortReservation[] = [];
const clients: net.Socket[] = [];
afterEach(async () => {
  // Both sides: a connection handed over is the server's to close, and a paused socket never reads the client's FIN.
  for (const socket of clients.splice(0)) socket.destroy();
  for (const reservation of reservations.splice(0)) if (reservation.server.listening) await reservation.release();
});

async function reserve(port = 0): Promise<PortReservation> {
  const reservation = await reservePort(port, "127.0.0.1");
  reservations.push(reservation);
  return reservation;
}

/** Connects a client and resolves with the server's side of the connection once the reservation accepted it. */
function connect(reservation: PortReservation): Promise<{ client: net.Socket; accepted: net.Socket }> {
  return new Promise((resolve) => {
    reservation.server.once("connection", (accepted: net.Socket) => {
      clients.push(accepted);
      resolve({ client, accepted });
    });
    const client = net.connect({ host: "127.0.0.1", port: reservation.port });
    client.on("error", () => undefined);
    clients.push(client);
  });
}

describe("reservePort", () => {
  it("holds each connection that arrives and hands it over exactly once", async () => {
    const reservation = await reserve();
    const first = await connect(reservation);
    const second = await connect(reservation);
    expect(reservation.takeHeld()).toEqual([first.accepted, second.accepted]);
    expect(reservation.takeHeld()).toEqual([]);
  });

  it("a held connection that closed before the hand-over is not handed over", async () => {
    const reservation = await reserve();
    const gone = await connect(reservation);
    const kept = await connect(reservation);
    await new Promise((resolve) => gone.accepted.once("close", resolve).destroy());
    expect(reservation.takeHeld()).toEqual([kept.accepted]);
  });

  it("release gives the port back and closes the connections still held", async () => {
    const reservation = await reserve();
    const { client } = await connect(reservation);
    const clientClosed = new Promise((resolve) => client.once("close", resolve));
    await reservation.release();
    await clientClosed;
    expect(reservation.server.listening).toBe(false);
    const again = await reserve(reservation.port);
    expect(again.port).toBe(reservation.port);
  });

  it("a port in use fails the reservation with EADDRINUSE", async () => {
    const reservation = await reserve();
    await expect(reservePort(reservation.port, "127.0.0.1")).rejects.toMatchObject({ code: "EADDRINUSE" });
  });
});
