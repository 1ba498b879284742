import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { REDACTED, scrubRelayText } from "../../src/notify/relay-text.js";
import { echoOfLogin, passwordLeaks } from "../support/smtp.js";

const PASSWORD = "Relay-Pa55word!";
const b64 = (text: string) => Buffer.from(text, "utf8").toString("base64");
const scrub = (text: string, password: string | undefined = PASSWORD) => scrubRelayText(text, password);

describe("scrubRelayText", () => {
  it("removes the plain password, in any letter case", () => {
    expect(scrub(`535 auth failed for mailer/${PASSWORD} (was ${PASSWORD.toUpperCase()})`)).toBe(`535 auth failed for mailer/${REDACTED} (was ${REDACTED})`);
  });

  it("removes the password in base64: padded, unpadded and URL-safe", () => {
    const password = "p?>~p?>~xx"; // encodes with + and /, and needs padding
    const padded = b64(password);
    expect(padded).toMatch(/[+/].*=$/);
    for (const form of [padded, padded.replace(/=+$/, ""), Buffer.from(password).toString("base64url")]) {
      const out = scrub(`535 bad credentials ${form} given`, password);
      expect(out).toBe(`535 bad credentials ${REDACTED} given`);
    }
  });

  it("removes AUTH PLAIN blobs (\\0user\\0password) at every byte alignment of the password", () => {
    // User names of 1, 2 and 3 characters put the password at each position within a base64 group.
    for (const user of ["a", "ab", "abc", "mailer"]) {
      const blob = b64(`\0${user}\0${PASSWORD}`);
      const out = scrub(`535 5.7.8 rejected blob ${blob} for ${user}`);
      expect(out).toBe(`535 5.7.8 rejected blob ${REDACTED} for ${user}`);
    }
  });

  it("removes a blob glued to other base64 characters (decoded at an offset)", () => {
    for (const glue of ["x", "xy", "xyz", "wxyz1"]) {
      const blob = b64(`\0mailer\0${PASSWORD}`);
      expect(passwordLeaks(scrub(`535 token=${glue}${blob}.`), PASSWORD)).toEqual([]);
    }
  });

  it("removes a password embedded in longer base64 data at any byte alignment", () => {
    for (let before = 0; before < 6; before++) {
      for (let after = 0; after < 4; after++) {
        const encoded = Buffer.concat([randomBytes(before), Buffer.from(PASSWORD), randomBytes(after)]).toString("base64");
        const out = scrub(`550 ${encoded} rejected`);
        expect(out).toBe(`550 ${REDACTED} rejected`);
      }
    }
  });

  it("redacts the argument of an echoed AUTH PLAIN / AUTH LOGIN line, even without knowing the password", () => {
    expect(scrub("535 AUTH PLAIN AGEAYg== rejected", undefined)).toBe(`535 AUTH PLAIN ${REDACTED} rejected`);
    expect(scrub("you sent: auth login bWFpbGVy", undefined)).toBe(`you sent: auth login ${REDACTED}`);
    expect(scrub(`535 AUTH PLAIN ${b64(`\0mailer\0${PASSWORD}`)}`)).toBe(`535 AUTH PLAIN ${REDACTED}`);
  });

  it("redacts the client's lines of an echoed AUTH LOGIN exchange, each on its own line", () => {
    const exchange = ["AUTH LOGIN", "334 VXNlcm5hbWU6", b64("mailer"), "334 UGFzc3dvcmQ6", b64(PASSWORD), "535 5.7.8 Authentication failed"].join("\r\n");
    expect(scrub(exchange).split("\r\n")).toEqual(["AUTH LOGIN", "334 VXNlcm5hbWU6", REDACTED, "334 UGFzc3dvcmQ6", REDACTED, "535 5.7.8 Authentication failed"]);
    // Also when the password is unknown (a test of an unsaved configuration without one).
    expect(scrub(exchange, undefined)).not.toContain(b64(PASSWORD));
  });

  it("finds nothing left of everything a careless relay echoes, for passwords of many shapes", () => {
    for (const password of [PASSWORD, "ab1", "pässwörd-ünïcode", "with space and \"quotes\"", randomBytes(12).toString("base64"), "a.b*c+d?(e)"]) {
      for (const username of ["m", "ma", "mai", "mailer@example.com"]) {
        const echo = echoOfLogin({ method: "PLAIN", username, password });
        expect(passwordLeaks(echo, password).length).toBeGreaterThan(0);
        expect(passwordLeaks(scrub(echo, password), password), `${password} / ${username}`).toEqual([]);
      }
    }
  });

  it("leaves replies without the password as they are, and is idempotent", () => {
    for (const reply of ["250 2.0.0 OK: queued as 7F3A2B1C9D", "535 5.7.8 Error: authentication failed: UGFzc3dvcmQ6", "Invalid login: 535 Invalid username or password"]) {
      expect(scrub(reply)).toBe(reply);
    }
    const once = scrub(echoOfLogin({ method: "PLAIN", username: "mailer", password: PASSWORD }));
    expect(scrub(once)).toBe(once);
  });

  it("never takes a marker apart, even for a password that occurs in it", () => {
    expect(scrub(`AUTH PLAIN ${b64("\0u\0red")} and red`, "red")).toBe(`AUTH PLAIN ${REDACTED} and ${REDACTED}`);
  });
});
