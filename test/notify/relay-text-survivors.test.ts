import { describe, expect, it } from "vitest";
import { REDACTED, scrubRelayText } from "../../src/notify/relay-text.js";

/**
 * scrubRelayText (README "Outgoing mail": what the relay says is stored with the password scrubbed out,
 * also inside echoed AUTH exchanges): the client's line answering an AUTH prompt is redacted wherever
 * the prompt stands, also when the relay's text starts with it; a bare word with no prompt before it is
 * the relay's own and stays.
 */
const b64 = (text: string) => Buffer.from(text, "utf8").toString("base64");

describe("a SASL response is the line after an AUTH prompt, even when the prompt is the first line", () => {
  it("a 334 challenge on the first line: the answer on the second line is redacted", () => {
    for (const newline of ["\r\n", "\n"]) {
      const text = ["334 VXNlcm5hbWU6", b64("mailer"), "535 5.7.8 failed"].join(newline);
      expect(scrubRelayText(text, undefined).split(newline)).toEqual(["334 VXNlcm5hbWU6", REDACTED, "535 5.7.8 failed"]);
    }
  });

  it("a bare AUTH LOGIN on the first line: the answer on the second line is redacted", () => {
    const text = ["AUTH LOGIN", b64("secret-user"), "454 try later"].join("\r\n");
    expect(scrubRelayText(text, undefined).split("\r\n")).toEqual(["AUTH LOGIN", REDACTED, "454 try later"]);
  });

  it("a base64-looking first line has no prompt before it and stays as the relay said it", () => {
    const text = ["Queued", "250 ok"].join("\r\n");
    expect(scrubRelayText(text, undefined)).toBe(text);
  });
});

describe("the password is found in a base64 token at every character offset, also in a short token", () => {
  it("a token that is the password's encoding behind one to three other characters", () => {
    const password = "pw1";
    for (const glue of ["", "x", "xy", "xyz"]) {
      expect(scrubRelayText(`535 ${glue}${b64(password)} no`, password)).toBe(`535 ${REDACTED} no`);
    }
  });
});
