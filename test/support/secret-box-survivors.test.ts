import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { openSecret, sealSecret } from "../../src/support/secret-box.js";

// A sealed secret of an unknown format or version (src/support/secret-box.ts) is refused with a message saying so,
// before any decryption is tried.

describe("opening a value that is no sealed secret of a known version", () => {
  const key = randomBytes(32);

  it("is refused with a message that says what is wrong", () => {
    const sealed = sealSecret(key, "s3cret", "ctx");
    expect(openSecret(key, sealed, "ctx")).toBe("s3cret");
    const message = /not a sealed secret of a known version/;
    expect(() => openSecret(key, sealed.replace(/^v1\./, "v2."), "ctx")).toThrow(message);
    expect(() => openSecret(key, "v1.", "ctx")).toThrow(message);
    expect(() => openSecret(key, "plain text", "ctx")).toThrow(message);
  });
});
