import { expect } from "vitest";

/** The error `action` throws, which must be a `kind` (the test fails if it returns, or throws anything else). */
export function thrownBy<E extends Error>(kind: abstract new (...args: never[]) => E, action: () => unknown): E {
  try {
    action();
  } catch (error) {
    expect(error).toBeInstanceOf(kind);
    return error as E;
  }
  return expect.fail(`expected a ${kind.name}, nothing was thrown`);
}
