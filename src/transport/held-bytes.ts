const NONE = new Uint8Array(0);
/** The smallest buffer worth allocating when bytes start to be held. */
const FIRST_CAPACITY = 256;

export interface HeldBytes {
  /** How many bytes are held. */
  readonly size: number;
  /** Holds `bytes` after those held, in a buffer of at most `capacity` bytes (which must leave room for them). */
  add(bytes: Uint8Array, capacity: number): void;
  /** Hands over the bytes held, as one array (no copy of a single piece); the holder starts empty again. */
  take(): Uint8Array;
}

/**
 * Bytes that arrive in pieces, held in one buffer that grows by doubling up to the capacity the caller allows. A body
 * sent a byte at a time then costs its bytes (at most twice), not an object per piece: a list of the pieces kept
 * every one of a million one-byte network chunks, some hundred bytes each, for a body of one megabyte.
 */
export function createHeldBytes(): HeldBytes {
  /** The only piece so far, kept as it came (the usual case: a small body in one chunk). */
  let single: Uint8Array | undefined;
  let buffer = NONE;
  let size = 0;

  const grow = (needed: number, capacity: number) => {
    const grown = new Uint8Array(Math.max(needed, Math.min(capacity, Math.max(buffer.length * 2, FIRST_CAPACITY))));
    grown.set(buffer.subarray(0, size));
    buffer = grown;
  };

  return {
    get size() {
      return size;
    },
    add(bytes, capacity) {
      if (size === 0) {
        single = bytes;
        size = bytes.length;
        return;
      }
      if (single !== undefined) {
        const first = single;
        single = undefined;
        size = 0;
        grow(first.length + bytes.length, capacity);
        buffer.set(first);
        size = first.length;
      } else if (size + bytes.length > buffer.length) {
        grow(size + bytes.length, capacity);
      }
      buffer.set(bytes, size);
      size += bytes.length;
    },
    take() {
      const taken = single ?? buffer.subarray(0, size);
      single = undefined;
      buffer = NONE;
      size = 0;
      return taken;
    },
  };
}
