import { createContextKey } from "@connectrpc/connect";

/**
 * The remote address of the connection a call came on (IPv4-mapped IPv6 written as plain IPv4),
 * for limits that one client must not exhaust for everyone. Empty when unknown.
 */
export const peerAddressKey = createContextKey<string>("", { description: "peer address" });

/** The peer of a socket, one spelling per address: `::ffff:10.0.0.1` and `10.0.0.1` are one peer. */
export function peerAddressOf(socket: { remoteAddress?: string | undefined } | undefined | null): string {
  const address = socket?.remoteAddress ?? "";
  return address.startsWith("::ffff:") && address.includes(".") ? address.slice("::ffff:".length) : address;
}
