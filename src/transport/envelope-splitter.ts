import type { EnvelopedMessage } from "@connectrpc/connect/protocol";
import { DomainError, invalidArgument } from "../domain/errors.js";

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
 * body over the limit), a body that ends inside an envelope when it ends (`request.malformed`). The chunks of an
 * envelope are joined once, when all its bytes are there.
 */
export function createEnvelopeSplitter(readMaxBytes: number): EnvelopeSplitter {
  let parts: Uint8Array[] = [];
  let size = 0;
  let header: { flags: number; length: number } | undefined;

  /** The first `length` bytes taken and not yet handed out, as one array (size ≥ length). */
  const take = (length: number): Uint8Array => {
    const joined = parts.length === 1 ? parts[0]! : Buffer.concat(parts, size);
    parts = [joined.subarray(length)];
    size -= length;
    return joined.subarray(0, length);
  };

  return {
    push(chunk) {
      parts.push(chunk);
      size += chunk.byteLength;
      const envelopes: EnvelopedMessage[] = [];
      for (;;) {
        if (header === undefined) {
          if (size < HEADER_BYTES) break;
          const bytes = take(HEADER_BYTES);
          const length = new DataView(bytes.buffer, bytes.byteOffset, HEADER_BYTES).getUint32(1);
          if (length > readMaxBytes) {
            throw new DomainError("resource_exhausted", "request.too_large", `request message of ${length} bytes is larger than ${readMaxBytes} bytes`);
          }
          header = { flags: bytes[0]!, length };
        }
        if (size < header.length) break;
        envelopes.push({ flags: header.flags, data: take(header.length) });
        header = undefined;
      }
      return envelopes;
    },
    end() {
      if (header !== undefined || size > 0) throw invalidArgument("request.malformed", "the request ends inside a message envelope");
    },
  };
}

/** The envelopes of a request body, as they complete (see createEnvelopeSplitter). */
export async function* splitEnvelopes(body: AsyncIterable<Uint8Array>, readMaxBytes: number): AsyncIterable<EnvelopedMessage> {
  const splitter = createEnvelopeSplitter(readMaxBytes);
  for await (const chunk of body) yield* splitter.push(chunk);
  splitter.end();
}
