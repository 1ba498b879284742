import { describe, expect, it } from "vitest";
import { constantTimeEqual } from "../../src/support/crypto.js";

// constantTimeEqual (src/support/crypto.ts) compares secrets: strings of different lengths are simply unequal,
// never an error, and equal strings are equal.

describe("constant-time comparison", () => {
  it("strings of different lengths are unequal, never an error", () => {
    expect(constantTimeEqual("secret", "secret-longer")).toBe(false);
    expect(constantTimeEqual("secret-longer", "secret")).toBe(false);
    expect(constantTimeEqual("", "x")).toBe(false);
  });

  it("strings of one length are equal exactly when they are the same", () => {
    expect(constantTimeEqual("secret", "secret")).toBe(true);
    expect(constantTimeEqual("secret", "secreT")).toBe(false);
  });
});
