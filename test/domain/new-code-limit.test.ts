import { describe, expect, it } from "vitest";
import { DomainError } from "../../src/domain/errors.js";
import { checkNewCodeAllowed, NEW_CODE_COOLDOWN_MS, NEW_CODE_WINDOW_MS, NEW_CODES_PER_WINDOW } from "../../src/domain/new-code-limit.js";
import { thrownBy } from "../support/thrown.js";

const NOW = 1_800_000_000_000;
const MINUTE = 60_000;
const refusal = (times: number[]) => thrownBy(DomainError, () => checkNewCodeAllowed(times, NOW));

describe("how often a page may mail a new code", () => {
  it("is a minute after the newest code mail, at most five in any hour", () => {
    expect([NEW_CODE_COOLDOWN_MS, NEW_CODE_WINDOW_MS, NEW_CODES_PER_WINDOW]).toEqual([MINUTE, 60 * MINUTE, 5]);
  });

  it("allows the first code mail, and one a minute after the newest", () => {
    expect(() => checkNewCodeAllowed([], NOW)).not.toThrow();
    expect(() => checkNewCodeAllowed([NOW - MINUTE], NOW)).not.toThrow();
    expect(() => checkNewCodeAllowed([NOW - 30 * MINUTE, NOW - MINUTE, NOW - 2 * MINUTE], NOW)).not.toThrow();
  });

  it("refuses within the minute, saying when to come back (resource_exhausted, retryAfterSeconds)", () => {
    expect(refusal([NOW - MINUTE + 1])).toMatchObject({ kind: "resource_exhausted", reason: "code.resend_limited", metadata: { retryAfterSeconds: "1" } });
    expect(refusal([NOW - 10 * MINUTE, NOW - 20_000]).metadata).toEqual({ retryAfterSeconds: "40" });
    expect(refusal([NOW]).metadata).toEqual({ retryAfterSeconds: "60" });
    expect(refusal([NOW]).message).toMatch(/try again later/);
  });

  it("refuses a sixth code mail within the hour until the oldest of the five leaves it", () => {
    const five = [50, 40, 30, 20, 10].map((m) => NOW - m * MINUTE);
    expect(refusal(five).metadata).toEqual({ retryAfterSeconds: String(10 * 60) });
    // Four in the hour and one older than the hour: allowed.
    expect(() => checkNewCodeAllowed([NOW - 60 * MINUTE, ...five.slice(1)], NOW)).not.toThrow();
    // Six in the hour: the fifth newest frees the place.
    expect(refusal([NOW - 55 * MINUTE, ...five]).metadata).toEqual({ retryAfterSeconds: String(10 * 60) });
    // Four mails are no reason to wait beyond the minute.
    expect(() => checkNewCodeAllowed(five.slice(0, 4), NOW)).not.toThrow();
  });

  it("reads the mails' times in any order", () => {
    const shuffled = [10, 50, 30, 20, 40].map((m) => NOW - m * MINUTE);
    expect(refusal(shuffled).metadata).toEqual({ retryAfterSeconds: String(10 * 60) });
    expect(refusal([NOW - 10 * MINUTE, NOW - 0.5 * MINUTE, NOW - 30 * MINUTE]).metadata).toEqual({ retryAfterSeconds: "30" });
    // Mails older than the hour never hold a new one back, however many.
    expect(() => checkNewCodeAllowed([...[70, 65, 61, 90, 120, 200].map((m) => NOW - m * MINUTE), NOW - 2 * MINUTE], NOW)).not.toThrow();
  });

  it("takes the later of the two limits", () => {
    const five = [59, 40, 30, 20, 0.5].map((m) => NOW - m * MINUTE);
    expect(refusal(five).metadata).toEqual({ retryAfterSeconds: "60" });
    const cooling = [59.9, 40, 30, 20, 0.1].map((m) => NOW - m * MINUTE);
    expect(refusal(cooling).metadata).toEqual({ retryAfterSeconds: "54" });
  });
});
