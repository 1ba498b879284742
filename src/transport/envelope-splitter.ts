import type { EnvelopedMessage } from "@connectrpc/connect/protocol";
import { DomainError, invalidArgument } from "../domain/errors.js";
import { createHeldBytes } from "./held-bytes.js";

/** An envelope's header: one byte of flags, four of the message's length (big-endian). */
const HEADER_BYTES = 5;

export interface EnvelopeSplitter {
  /** Takes the next chunk of the body; answers the envelopes it completed, in order. */
  push(chunk: Uint8Array): EnvelopedMessage[];
  /** Throws invalid_argument `request.malformed` when the bytes taken so far end inside an envelope. */
  end(): void;
}

/**
 * Splits a request body into its envelopes (gRPC, gRPC-web and Connect streaming framing) synchronously. A message
 * longer than `readMaxBytes` is refused as soon as its header says so (resource_exhausted `request.too_large`, like a
 * body over the limit), a body that ends inside an envelope when it ends (`request.malformed`). What an envelope needs
 * is held as bytes (held-bytes.ts), never more than its declared length, and not allocated before it arrives; an
 * envelope that came whole in one chunk is a view of it.
 */
export function createEnvelopeSplitter(readMaxBytes: number): EnvelopeSplitter {
  const held = createHeldBytes();
  let header: { flags: number; length: number } | undefined;

  return {
    push(chunk) {
      const envelopes: EnvelopedMessage[] = [];
      let offset = 0;
      for (;;) {
        const needed = header === undefined ? HEADER_BYTES : header.length;
        const missing = needed - held.size;
        if (chunk.length - offset < missing) {
          held.add(chunk.subarray(offset), needed);
          break;
        }
        held.add(chunk.subarray(offset, offset + missing), needed);
        offset += missing;
        const bytes = held.take();
        if (header === undefined) {
          const length = new DataView(bytes.buffer, bytes.byteOffset, HEADER_BYTES).getUint32(1);
          if (length > readMaxBytes) {
            throw new DomainError("resource_exhausted", "request.too_large", `request message of ${length} bytes is larger than ${readMaxBytes} bytes`);
          }
          header = { flags: bytes[0]!, length };
        } else {
          envelopes.push({ flags: header.flags, data: bytes });
          header = undefined;
        }
      }
      return envelopes;
    },
    end() {
      if (header !== undefined || held.size > 0) throw invalidArgument("request.malformed", "the request ends inside a message envelope");
    },
  };
}

/** The envelopes of a request body, as they complete (see createEnvelopeSplitter). */
export async function* splitEnvelopes(body: AsyncIterable<Uint8Array>, readMaxBytes: number): AsyncIterable<EnvelopedMessage> {
  const splitter = createEnvelopeSplitter(readMaxBytes);
  for await (const chunk of body) yield* splitter.push(chunk);
  splitter.end();
}
