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
  return {
    next() {
      const time = Date.now().toString(36).padStart(9, "0");
      const random = randomBytes(10).toString("hex");
      return `${time}${random}`;
    },
  };
}
