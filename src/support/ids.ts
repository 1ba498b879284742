import { randomBytes } from "node:crypto";

/** Source of new object ids; injected so tests can predict them. */
export interface IdGenerator {
  next(): string;
}

/**
 * Ids sort by creation time (a millisecond timestamp prefix) and are unguessable (80 random bits),
 * so lists ordered by id are ordered by creation and ids leak nothing useful.
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
