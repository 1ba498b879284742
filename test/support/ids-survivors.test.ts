import { afterEach, describe, expect, it, vi } from "vitest";
import { createIdGenerator } from "../../src/support/ids.js";

// Object ids (src/support/ids.ts) start with their creation time, so they sort by creation: the timestamp has a
// fixed width, and ids made later sort after earlier ones also when the base-36 time gains a digit.

afterEach(() => {
  vi.restoreAllMocks();
});

describe("object ids", () => {
  it("sort by creation time, also across the moment the time gains a base-36 digit", () => {
    const ids = createIdGenerator();
    const now = vi.spyOn(Date, "now");
    const lastOfEightDigits = 36 ** 8 - 1;
    now.mockReturnValue(lastOfEightDigits);
    const earlier = ids.next();
    now.mockReturnValue(lastOfEightDigits + 1);
    const later = ids.next();
    expect(earlier.length).toBe(later.length);
    expect([later, earlier].sort()).toEqual([earlier, later]);
  });

  it("end with 80 random bits, a fresh part for every id, also across refills of the random pool", () => {
    const ids = createIdGenerator();
    const made = Array.from({ length: 2000 }, () => ids.next());
    for (const id of made) expect(id).toMatch(/^[0-9a-z]{9}[0-9a-f]{20}$/);
    expect(new Set(made.map((id) => id.slice(9))).size).toBe(made.length);
  });
});
