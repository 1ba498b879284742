import { readFileSync } from "node:fs";
import { createServer, type Server, type Socket } from "node:net";
import type { AddressInfo } from "node:net";
import { afterAll, describe, expect, it } from "vitest";
import { SMTPServer } from "smtp-server";
import { testSmtp, type SmtpTestResult } from "../../src/notify/smtp-test.js";
import { eventually } from "../support/eventually.js";
import { makeTestCa, startSmtpServer, type SmtpServerOptions, type TestSmtpServer } from "../support/smtp.js";

/**
 * TestSmtpConfig (proto SmtpService): dials the relay and sends a test mail, reporting connect, EHLO,
 * TLS (with its version), AUTH, MAIL FROM, RCPT TO and DATA in order, each with its outcome; a failed
 * step is the one the relay (or the client) refused, with the relay's reply, and the steps before it
 * passed. Called in-process against real SMTP servers.
 */
const PASSWORD = "Relay-Pa55word!";
const USER = "mailer";
const trusted = makeTestCa();
const untrusted = makeTestCa();
const client = { ca: readFileSync(trusted.caFile), timeoutMs: 2_000 };
const closers: (() => Promise<void>)[] = [];
afterAll(() => Promise.all(closers.map((close) => close())));

async function relay(options: Partial<SmtpServerOptions>): Promise<TestSmtpServer> {
  const started = await startSmtpServer({ tls: "none", ...options });
  closers.push(() => started.close());
  return started;
}
const settings = (port: number, tls: boolean, user = "") => ({ senderAddress: "noreply@gatehouse.test", senderName: "Gatehouse Test Sender", tls, host: `localhost:${port}`, user });
const steps = (result: SmtpTestResult) => result.steps.map((s) => [s.step, s.ok]);
const last = (result: SmtpTestResult) => result.steps.at(-1);

/** An smtp-server relay whose hooks answer with the given SMTP errors. */
async function refusingRelay(hooks: { mailFrom?: [number, string]; rcptTo?: [number, string]; data?: [number, string] }): Promise<number> {
  const refuse = (answer: [number, string] | undefined, callback: (error?: Error | null) => void) =>
    answer ? callback(Object.assign(new Error(answer[1]), { responseCode: answer[0] })) : callback();
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS"],
    hideSTARTTLS: true,
    logger: false,
    onMailFrom: (_address, _session, callback) => refuse(hooks.mailFrom, callback),
    onRcptTo: (_address, _session, callback) => refuse(hooks.rcptTo, callback),
    onData(stream, _session, callback) {
      stream.on("end", () => refuse(hooks.data, callback));
      stream.resume();
    },
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  closers.push(() => new Promise((resolve) => server.close(() => resolve())));
  return ((server as unknown as { server: { address(): AddressInfo } }).server.address()).port;
}

/**
 * A relay that follows a script, for replies smtp-server never gives: `answer` maps a command verb
 * (EHLO, HELO, MAIL, RCPT, DATA, STARTTLS) to its reply, or to "close" (reply 220, then hang up), or to "reset"
 * (reply 220, then reset the connection when the client's next bytes — its TLS ClientHello — arrive).
 */
async function scriptedRelay(answer: Partial<Record<string, string>>): Promise<number> {
  const server: Server = createServer((socket: Socket) => {
    let buffered = "";
    let inData = false;
    socket.write("220 scripted relay ready\r\n");
    socket.on("error", () => undefined);
    let resetOnNextBytes = false;
    socket.on("data", (chunk) => {
      if (resetOnNextBytes) {
        socket.resetAndDestroy();
        return;
      }
      buffered += chunk.toString("latin1");
      let end: number;
      while ((end = buffered.indexOf("\r\n")) >= 0) {
        const line = buffered.slice(0, end);
        buffered = buffered.slice(end + 2);
        if (inData) {
          if (line === ".") {
            inData = false;
            socket.write("250 queued\r\n");
          }
          continue;
        }
        const verb = line.split(" ")[0]!.toUpperCase();
        const reply = answer[verb] ?? { EHLO: "250 scripted", HELO: "250 scripted", MAIL: "250 ok", RCPT: "250 ok", DATA: "354 go on", QUIT: "221 bye" }[verb] ?? "502 unknown";
        if (reply === "close") {
          socket.write("220 go ahead\r\n", () => socket.destroy());
          return;
        }
        if (reply === "reset") {
          resetOnNextBytes = true;
          socket.write("220 go ahead\r\n");
          return;
        }
        socket.write(`${reply}\r\n`);
        if (verb === "DATA" && reply.startsWith("354")) inData = true;
        if (verb === "QUIT") socket.end();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  closers.push(() => new Promise((resolve) => server.close(() => resolve())));
  return (server.address() as AddressInfo).port;
}

describe("a test that passes reports every step it went through", () => {
  it("in clear: connect (to host:port), EHLO, MAIL FROM, RCPT TO, DATA with the relay's answer; no TLS step and no TLS version", async () => {
    const target = await relay({});
    const result = await testSmtp(settings(target.port, false), undefined, client, "probe-plain@example.com");
    expect(result.ok).toBe(true);
    expect(steps(result)).toEqual([["connect", true], ["ehlo", true], ["mail_from", true], ["rcpt_to", true], ["data", true]]);
    expect(result.steps[0]?.detail).toBe(`localhost:${target.port}`);
    expect(last(result)?.detail).toMatch(/^250 /);
    expect(result.tlsVersion).toBe("");
    // No AUTH without a user: the relay saw no login.
    expect(target.logins).toEqual([]);
  });

  it("sends a real test mail to the receiver, from the configured sender (with its name), with a Message-ID of its own", async () => {
    const target = await relay({});
    await testSmtp(settings(target.port, false), undefined, client, "probe-mail@example.com");
    const mail = await target.waitFor((m) => m.to.includes("probe-mail@example.com"));
    expect(mail.from).toBe("noreply@gatehouse.test");
    expect(mail.raw).toMatch(/^From: Gatehouse Test Sender <noreply@gatehouse\.test>$/m);
    expect(mail.raw).toMatch(/^Message-ID: <[^>]+@gatehouse>$/m);
    // A mail a person can recognize: a subject, and a text and an HTML part that say something.
    expect(mail.raw).toMatch(/^Subject: \S.*$/m);
    expect(mail.raw).toMatch(/Content-Type: text\/plain[^\n]*\r?\n(?:[^\n]+\r?\n)*\r?\n\s*\S/);
    expect(mail.raw).toMatch(/Content-Type: text\/html[^\n]*\r?\n(?:[^\n]+\r?\n)*\r?\n\s*<p>[^<\s]/);
  });

  it("every step of the transcript says something: the passed ones too, also those reported after a later failure", async () => {
    const passed = await testSmtp(settings((await relay({ tls: "starttls", certificate: trusted, auth: { user: USER, pass: PASSWORD } })).port, true, USER), PASSWORD, client, "probe-detail@example.com");
    const failed = await testSmtp(settings((await relay({ rejectRecipients: ["gone-detail@example.com"] })).port, false), undefined, client, "gone-detail@example.com");
    for (const result of [passed, failed]) {
      for (const step of result.steps) expect(step.detail.trim(), `${step.step} says something`).not.toBe("");
    }
  });

  it("leaves no session open at the relay once the test is over", async () => {
    let open = 0;
    const server = new SMTPServer({
      authOptional: true,
      disabledCommands: ["STARTTLS"],
      hideSTARTTLS: true,
      logger: false,
      onConnect: (_session, callback) => {
        open++;
        callback();
      },
      onClose: () => {
        open--;
      },
      onData(stream, _session, callback) {
        stream.on("end", () => callback());
        stream.resume();
      },
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
    closers.push(() => new Promise((resolve) => server.close(() => resolve())));
    const port = ((server as unknown as { server: { address(): AddressInfo } }).server.address()).port;
    // The client's own time limits are far away: only closing the session ends it in time.
    const result = await testSmtp(settings(port, false), undefined, { ...client, timeoutMs: 30_000 }, "probe-close@example.com");
    expect(result.ok).toBe(true);
    await eventually(() => open === 0 || undefined, { what: "the relay to see the session closed", timeoutMs: 3_000 });
    expect(open).toBe(0);
  });

  it("with TLS and a user: the TLS step carries the negotiated version, then AUTH", async () => {
    const target = await relay({ tls: "starttls", certificate: trusted, auth: { user: USER, pass: PASSWORD } });
    const result = await testSmtp(settings(target.port, true, USER), PASSWORD, client, "probe-tls@example.com");
    expect(steps(result)).toEqual([["connect", true], ["ehlo", true], ["tls", true], ["auth", true], ["mail_from", true], ["rcpt_to", true], ["data", true]]);
    expect(result.tlsVersion).toMatch(/^TLSv1\.[23]$/);
    expect(result.steps.find((s) => s.step === "tls")?.detail).toBe(result.tlsVersion);
    expect(target.logins).toEqual([{ method: "PLAIN", username: USER, secure: true }]);
  });
});

describe("a failed step is the one that failed, after the steps that passed", () => {
  it("a relay that cannot be reached fails at connect", async () => {
    const probe = await startSmtpServer({ tls: "none" });
    const port = probe.port;
    await probe.close();
    const result = await testSmtp(settings(port, false), undefined, client, "probe@example.com");
    expect(result.ok).toBe(false);
    expect(steps(result)).toEqual([["connect", false]]);
    expect(last(result)?.detail).toMatch(/ECONNREFUSED/);
  });

  it("a rejected password fails at AUTH, once, after connect, EHLO and TLS (each reported once)", async () => {
    const target = await relay({ tls: "starttls", certificate: trusted, auth: { user: USER, pass: "what-the-relay-wants" } });
    const result = await testSmtp(settings(target.port, true, USER), PASSWORD, client, "probe@example.com");
    expect(steps(result)).toEqual([["connect", true], ["ehlo", true], ["tls", true], ["auth", false]]);
    expect(last(result)?.detail).toMatch(/^535 /);
  });

  it("a user without a password fails at AUTH (the client refuses before the relay is asked)", async () => {
    const target = await relay({ tls: "starttls", certificate: trusted, auth: { user: USER, pass: PASSWORD } });
    const result = await testSmtp(settings(target.port, true, USER), undefined, client, "probe@example.com");
    expect(steps(result)).toEqual([["connect", true], ["ehlo", true], ["tls", true], ["auth", false]]);
    expect(target.logins).toEqual([]);
  });

  it("a sender refused by the relay fails at MAIL FROM, with the relay's reply as it is", async () => {
    const port = await refusingRelay({ mailFrom: [553, "Sender not allowed"] });
    const result = await testSmtp(settings(port, false), undefined, client, "probe@example.com");
    expect(steps(result)).toEqual([["connect", true], ["ehlo", true], ["mail_from", false]]);
    expect(last(result)?.detail).toBe("553 Sender not allowed");
  });

  it("a recipient refused by the relay fails at RCPT TO, after MAIL FROM passed, with the relay's reply as it is", async () => {
    const target = await relay({ rejectRecipients: ["gone@example.com"] });
    const result = await testSmtp(settings(target.port, false), undefined, client, "gone@example.com");
    expect(steps(result)).toEqual([["connect", true], ["ehlo", true], ["mail_from", true], ["rcpt_to", false]]);
    expect(last(result)?.detail).toBe("550 Mailbox unavailable");
  });

  it("a message refused after its content fails at DATA", async () => {
    const port = await refusingRelay({ data: [554, "Message rejected as spam"] });
    const result = await testSmtp(settings(port, false), undefined, client, "probe@example.com");
    expect(steps(result)).toEqual([["connect", true], ["ehlo", true], ["mail_from", true], ["rcpt_to", true], ["data", false]]);
    expect(last(result)?.detail).toBe("554 Message rejected as spam");
  });

  it("a DATA command refused by the relay fails at DATA", async () => {
    const port = await scriptedRelay({ DATA: "554 no data today" });
    const result = await testSmtp({ ...settings(port, false), host: `127.0.0.1:${port}` }, undefined, { timeoutMs: 2_000 }, "probe@example.com");
    expect(steps(result)).toEqual([["connect", true], ["ehlo", true], ["mail_from", true], ["rcpt_to", true], ["data", false]]);
    expect(last(result)?.detail).toBe("554 no data today");
  });

  it("a relay that ends the session at EHLO fails at EHLO", async () => {
    const port = await scriptedRelay({ EHLO: "421 closing, too busy" });
    const result = await testSmtp({ ...settings(port, false), host: `127.0.0.1:${port}` }, undefined, { timeoutMs: 2_000 }, "probe@example.com");
    expect(steps(result)).toEqual([["connect", true], ["ehlo", false]]);
    expect(last(result)?.detail).toBe("421 closing, too busy");
  });

  it("a relay that refuses EHLO and HELO fails at EHLO", async () => {
    const port = await scriptedRelay({ EHLO: "500 no extended hello", HELO: "501 no hello either" });
    const result = await testSmtp({ ...settings(port, false), host: `127.0.0.1:${port}` }, undefined, { timeoutMs: 2_000 }, "probe@example.com");
    expect(steps(result)).toEqual([["connect", true], ["ehlo", false]]);
    expect(last(result)?.detail).toBe("501 no hello either");
  });

  it("a relay that hangs up during the STARTTLS upgrade fails at TLS", async () => {
    const port = await scriptedRelay({ EHLO: "250-scripted\r\n250 STARTTLS", STARTTLS: "close" });
    const result = await testSmtp({ ...settings(port, true), host: `127.0.0.1:${port}` }, undefined, { timeoutMs: 2_000 }, "probe@example.com");
    expect(result.ok).toBe(false);
    expect(last(result)?.step).toBe("tls");
    expect(last(result)?.ok).toBe(false);
  });

  it("a relay that resets the connection during the STARTTLS handshake fails at TLS, after connect and EHLO passed", async () => {
    const port = await scriptedRelay({ EHLO: "250-scripted\r\n250 STARTTLS", STARTTLS: "reset" });
    const result = await testSmtp({ ...settings(port, true), host: `127.0.0.1:${port}` }, undefined, { timeoutMs: 2_000 }, "probe@example.com");
    expect(result.ok).toBe(false);
    expect(result.steps.map((s) => [s.step, s.ok])).toEqual([
      ["connect", true],
      ["ehlo", true],
      ["tls", false],
    ]);
  });
});

describe("the detail of a TLS failure explains the tls: false rule only when the operator turned TLS off", () => {
  it("tls: true and a relay without STARTTLS: the relay's refusal, without the tls: false explanation", async () => {
    const target = await relay({ tls: "none" });
    const result = await testSmtp(settings(target.port, true, USER), PASSWORD, client, "probe@example.com");
    expect(steps(result)).toEqual([["connect", true], ["ehlo", true], ["tls", false]]);
    expect(last(result)?.detail).toMatch(/^5\d\d /);
    expect(last(result)?.detail).not.toMatch(/only sent over TLS|GATEHOUSE_SMTP_CA_FILE/);
  });

  it("tls: true and a certificate that does not verify: the verification error, without the tls: false explanation", async () => {
    const target = await relay({ tls: "starttls", certificate: untrusted });
    const result = await testSmtp(settings(target.port, true), undefined, client, "probe@example.com");
    expect(steps(result)).toEqual([["connect", true], ["ehlo", true], ["tls", false]]);
    expect(last(result)?.detail).toMatch(/certificate/);
    expect(last(result)?.detail).not.toMatch(/GATEHOUSE_SMTP_CA_FILE|only sent over TLS/);
  });

  it("tls: false with a user and a certificate that does not verify: names the CA file, not a missing STARTTLS", async () => {
    const target = await relay({ tls: "starttls", certificate: untrusted, auth: { user: USER, pass: PASSWORD } });
    const result = await testSmtp(settings(target.port, false, USER), PASSWORD, client, "probe@example.com");
    expect(steps(result)).toEqual([["connect", true], ["ehlo", true], ["tls", false]]);
    expect(last(result)?.detail).toMatch(/certificate.*GATEHOUSE_SMTP_CA_FILE/);
    expect(last(result)?.detail).not.toMatch(/no STARTTLS/);
    expect(target.logins).toEqual([]);
  });

  it("a failure at another step with tls: false is the relay's reply alone", async () => {
    const target = await relay({ rejectRecipients: ["nobody@example.com"] });
    const result = await testSmtp(settings(target.port, false), undefined, client, "nobody@example.com");
    expect(last(result)).toEqual({ step: "rcpt_to", ok: false, detail: "550 Mailbox unavailable" });
  });
});
