import { describe, expect, it } from "vitest";
import { REDACTED, scrubRelayText } from "../../src/notify/relay-text.js";

/**
 * scrubRelayText (src/notify/relay-text.ts): a bare base64 line is taken for a SASL response only
 * when it ANSWERS an AUTH prompt (the line before it is `AUTH <mechanism>` or a 334 challenge); the
 * relay's other words stay as they are.
 */
describe("SASL responses are the lines after an AUTH prompt, not before one", () => {
  it("a word on the line before a 334 challenge is left alone; the line after it is redacted", () => {
    const text = ["250 2.1.0 ok", "Queued", "334 VXNlcm5hbWU6", "bWFpbGVy"].join("\r\n");
    expect(scrubRelayText(text, undefined).split("\r\n")).toEqual(["250 2.1.0 ok", "Queued", "334 VXNlcm5hbWU6", REDACTED]);
  });

  it("the same with bare newlines", () => {
    const text = ["hello", "there", "AUTH LOGIN", "c2VjcmV0"].join("\n");
    expect(scrubRelayText(text, undefined).split("\n")).toEqual(["hello", "there", "AUTH LOGIN", REDACTED]);
  });
});
