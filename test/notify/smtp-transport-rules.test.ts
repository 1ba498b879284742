import { readFileSync } from "node:fs";
import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import { sendMail, SmtpRelayError } from "../../src/notify/smtp-transport.js";
import { echoOfLogin, makeTestCa, startSmtpServer, type SmtpServerOptions, type TestSmtpServer } from "../support/smtp.js";

/**
 * sendMail (src/notify/smtp-transport.ts), in-process against the real test relay: the password is
 * sent only as it was saved (never something else in its place), and nothing of the SMTP dialogue
 * leaves through nodemailer's own logging, which would carry the relay's words unscrubbed.
 */
const USER = "mailer";
const PASSWORD = "Transport-Pa55word!";
const ca = makeTestCa();
const client = { ca: readFileSync(ca.caFile), timeoutMs: 2_000 };
const relays: TestSmtpServer[] = [];
afterAll(() => Promise.all(relays.map((r) => r.close())));
afterEach(() => {
  vi.restoreAllMocks();
});

async function relay(options: Partial<SmtpServerOptions>) {
  const started = await startSmtpServer({ tls: "starttls", certificate: ca, ...options });
  relays.push(started);
  return started;
}
const settings = (target: TestSmtpServer, user: string) => ({ senderAddress: "noreply@gatehouse.test", senderName: "Gatehouse", tls: true, host: `localhost:${target.port}`, user });
const mail = (to: string) => ({
  messageId: `<transport-${to}@gatehouse>`,
  from: { name: "Gatehouse", address: "noreply@gatehouse.test" },
  to,
  date: new Date(),
  mail: { subject: "Transport test", text: "Hello.", html: "<p>Hello.</p>" },
});

describe("sendMail", () => {
  it("with a user but no password, sends no login at all (and fails the attempt)", async () => {
    const target = await relay({ auth: { user: USER, pass: PASSWORD } });
    const error = await sendMail(settings(target, USER), undefined, client, mail("nopass@example.com")).then(() => undefined, (thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(SmtpRelayError);
    expect(target.logins).toEqual([]);
    expect(target.received).toEqual([]);
  });

  it("writes nothing of the SMTP dialogue to the console, even when the relay echoes the login", async () => {
    const target = await relay({ auth: { user: USER, pass: "what-the-relay-wants" }, rejectAuthWith: echoOfLogin });
    const written: unknown[] = [];
    for (const method of ["log", "info", "warn", "error", "debug"] as const) vi.spyOn(console, method).mockImplementation((...args: unknown[]) => void written.push(args));
    const error = await sendMail(settings(target, USER), PASSWORD, client, mail("echo@example.com")).then(() => undefined, (thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(SmtpRelayError);
    expect(target.logins).toHaveLength(1);
    expect(written).toEqual([]);
  });

  it("delivers with the saved password over the required TLS, and answers the relay's reply", async () => {
    const target = await relay({ auth: { user: USER, pass: PASSWORD } });
    const { response } = await sendMail(settings(target, USER), PASSWORD, client, mail("ok@example.com"));
    expect(response).toMatch(/^250 /);
    expect(target.logins).toEqual([{ method: "PLAIN", username: USER, secure: true }]);
  });
});
