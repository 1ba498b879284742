import { randomBytes } from "node:crypto";

/** Source of new object ids; injected so tests can predict them. */
export interface IdGenerator {
  next(): string;
}

/**
 * Ids start with a millisecond timestamp (so they sort roughly by creation, which keeps index
 * inserts local) and end with 80 random bits (so they cannot be guessed). Lists that must be in
 * exact creation order sort by insertion (rowid), not by id.
 */
export function createIdGenerator(): IdGenerator {
  // The random bits come from the CSPRNG 4 KiB at a time (as node's randomUUID does): one call per id costs more than
  // the rest of making it, and a bulk import makes them by the thousand.
  let pool = Buffer.alloc(0);
  let used = 0;
  return {
    next() {
      if (used + RANDOM_BYTES > pool.length) {
        pool = randomBytes(POOL_BYTES);
        used = 0;
      }
      const time = Date.now().toString(36).padStart(9, "0");
      const random = pool.toString("hex", used, used + RANDOM_BYTES);
      used += RANDOM_BYTES;
      return `${time}${random}`;
    },
  };
}

const RANDOM_BYTES = 10;
const POOL_BYTES = 4096;
