import { toBinary, toJsonString } from "@bufbuild/protobuf";
import { writeFileSync } from "node:fs";
import type { BenchRequest } from "./scenarios.js";

/** The three protocols every scenario runs on; the names are the tests' (test/support/clients.ts). */
export const PROTOCOLS = ["connect-json-http1", "connect-proto-h2c", "grpc-h2c"] as const;
export type Protocol = (typeof PROTOCOLS)[number];

/** Connect JSON over HTTP/1.1 goes through wrk; the two h2c protocols through bench/load/h2c-load.c. */
export const generatorOf = (protocol: Protocol) => (protocol === "connect-json-http1" ? "wrk" : "h2c-load");

/**
 * bench/load/wrk-sequence.lua deals request lines to wrk's threads in blocks of this many (its BLOCK):
 * a wrong and the right code of one user, placed in one block, are sent by one thread in order.
 */
export const WRK_BLOCK = 128;

/** wrk's -H headers for Connect JSON (the body of each line is the request's canonical JSON). */
export const wrkHeaders = (token: string) => [`Authorization: Bearer ${token}`, "Content-Type: application/json", "Connect-Protocol-Version: 1"];

/** The request file of bench/load/wrk-sequence.lua: "<ok>\t<path>\t<json>" per line. */
export function writeWrkFile(file: string, requests: BenchRequest[]): void {
  const lines = requests.map((r) => `${r.ok ? 1 : 0}\t${r.path}\t${toJsonString(r.schema, r.message)}`);
  writeFileSync(file, `${lines.join("\n")}\n`);
}

/** gRPC's length-prefixed message: a flag byte (0, not compressed), the length, the message. */
function grpcFrame(message: Uint8Array): Buffer {
  const frame = Buffer.alloc(5 + message.byteLength);
  frame.writeUInt32BE(message.byteLength, 1);
  frame.set(message, 5);
  return frame;
}

/** The request file of bench/load/h2c-load.c: "H\t<name>\t<value>" headers, then "R\t<ok>\t<path>\t<hex body>". */
export function writeH2cFile(file: string, requests: BenchRequest[], protocol: Exclude<Protocol, "connect-json-http1">, token: string): void {
  const grpc = protocol === "grpc-h2c";
  const headers: Record<string, string> = grpc
    ? { "content-type": "application/grpc", te: "trailers", authorization: `Bearer ${token}` }
    : { "content-type": "application/proto", "connect-protocol-version": "1", authorization: `Bearer ${token}` };
  const lines = Object.entries(headers).map(([name, value]) => `H\t${name}\t${value}`);
  for (const r of requests) {
    const bytes = toBinary(r.schema, r.message);
    lines.push(`R\t${r.ok ? 1 : 0}\t${r.path}\t${Buffer.from(grpc ? grpcFrame(bytes) : bytes).toString("hex")}`);
  }
  writeFileSync(file, `${lines.join("\n")}\n`);
}
