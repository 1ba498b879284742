import { describe, expect, it } from "vitest";
import { REDACTED } from "../../src/notify/relay-text.js";
import { relayError, renderEml, SmtpRelayError } from "../../src/notify/smtp-transport.js";
import { passwordLeaks } from "../support/smtp.js";

/**
 * The error that leaves the SMTP client (src/notify/smtp-transport.ts SmtpRelayError; README "Outgoing
 * mail": what the relay says is stored and logged with the SMTP password scrubbed out): it keeps
 * nodemailer's code, reply code, command and the relay's reply, each scrubbed, and drops any of them that
 * is not of its kind, since such a value could carry the relay's words past the scrubbing. And the copy
 * of a mail kept while no SMTP server is configured is a text file with the server's (Unix) line ends.
 */
const PASSWORD = "Transport-Pa55word!";
const b64 = (text: string) => Buffer.from(text, "utf8").toString("base64");
const everything = (error: SmtpRelayError) => JSON.stringify({ message: error.message, code: error.code, responseCode: error.responseCode, command: error.command, response: error.response });

describe("relayError", () => {
  it("keeps the code, the reply code, the command and the relay's reply, with the password scrubbed out of each", () => {
    const blob = b64(`\0mailer\0${PASSWORD}`);
    const thrown = Object.assign(new Error(`Invalid login: 535 5.7.8 auth failed for mailer/${PASSWORD}`), {
      code: "EAUTH",
      responseCode: 535,
      command: `AUTH PLAIN ${blob}`,
      response: `535 5.7.8 auth failed for mailer/${PASSWORD}`,
    });
    const error = relayError(thrown, PASSWORD);
    expect(error).toBeInstanceOf(SmtpRelayError);
    expect(error.code).toBe("EAUTH");
    expect(error.responseCode).toBe(535);
    expect(error.command).toBe(`AUTH PLAIN ${REDACTED}`);
    expect(error.response).toBe(`535 5.7.8 auth failed for mailer/${REDACTED}`);
    expect(error.message).toBe(`Invalid login: 535 5.7.8 auth failed for mailer/${REDACTED}`);
    expect(passwordLeaks(everything(error), PASSWORD)).toEqual([]);
  });

  it("drops a code that is no string, a reply code that is no number, and a command or reply that is no text", () => {
    const thrown = Object.assign(new Error("failed"), {
      code: { said: `535 ${PASSWORD}` },
      responseCode: `535 ${PASSWORD}`,
      command: { line: `AUTH PLAIN ${b64(`\0mailer\0${PASSWORD}`)}` },
      response: [PASSWORD],
    });
    const error = relayError(thrown, PASSWORD);
    expect(error.code).toBeUndefined();
    expect(error.responseCode).toBeUndefined();
    expect(error.command).toBeUndefined();
    expect(error.response).toBeUndefined();
    expect(passwordLeaks(everything(error), PASSWORD)).toEqual([]);
  });
});

describe("renderEml (the copy of a mail kept while no SMTP server is configured)", () => {
  it("is text with Unix line ends, headers and both parts readable as they are", async () => {
    const eml = (
      await renderEml({
        messageId: "<copy-1@gatehouse>",
        from: { name: "Gatehouse", address: "no-reply@iam.example.com" },
        to: "ada@example.com",
        date: new Date("2026-11-25T12:00:00Z"),
        mail: { subject: "Verify your email address", text: "Hello Ada,\n\nYour code:\n    XYZ789\n", html: "<p>Hello Ada,</p>\n<p>XYZ789</p>" },
      })
    ).toString("utf8");
    expect(eml).not.toContain("\r");
    expect(eml).toMatch(/^To: ada@example\.com\n/m);
    expect(eml).toMatch(/^Subject: Verify your email address\n/m);
    expect(eml).toContain("\n    XYZ789\n");
  });
});
