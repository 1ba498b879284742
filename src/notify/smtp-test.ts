import SMTPConnection from "nodemailer/lib/smtp-connection/index.js";
import type { TLSSocket } from "node:tls";
import type { SmtpSettings } from "../domain/smtp.js";
import { scrubRelayText } from "./relay-text.js";
import { renderEml, type SmtpClientOptions, transportOptions } from "./smtp-transport.js";

export interface SmtpTestStep {
  step: "connect" | "ehlo" | "tls" | "auth" | "mail_from" | "rcpt_to" | "data";
  ok: boolean;
  detail: string;
}

export interface SmtpTestResult {
  ok: boolean;
  steps: SmtpTestStep[];
  tlsVersion: string;
}

interface SmtpError extends Error {
  code?: string;
  command?: string;
  response?: string;
}

/** Which step an SMTPConnection error belongs to. */
function failedStep(error: SmtpError): SmtpTestStep["step"] {
  // Stryker disable next-line StringLiteral: any stand-in for an absent command matches none of the commands below, as "" does
  const command = (error.command ?? "").toUpperCase();
  // Stryker disable next-line ConditionalExpression,LogicalOperator,StringLiteral: nodemailer names TLS or STARTTLS in the message of every ETLS error, so the message test below gives the same step
  if (error.code === "ETLS" || command === "STARTTLS") return "tls";
  // Stryker disable next-line MethodExpression: every nodemailer error of an AUTH command also has code EAUTH, so the AUTH prefix test is only a safety net
  if (error.code === "EAUTH" || command.startsWith("AUTH")) return "auth";
  if (command === "MAIL FROM") return "mail_from";
  if (command === "RCPT TO") return "rcpt_to";
  if (command === "DATA") return "data";
  // Stryker disable next-line ConditionalExpression,LogicalOperator,StringLiteral: nodemailer reports every refusal of the message with command DATA (above); "." and EMESSAGE only guard against other releases
  if (command === "." || error.code === "EMESSAGE") return "data";
  if (command === "EHLO" || command === "HELO") return "ehlo";
  // A TLS handshake that fails (implicit TLS, or a STARTTLS upgrade whose certificate does not
  // verify, which nodemailer reports as a socket error) is a TLS failure.
  // Stryker disable next-line ConditionalExpression,StringLiteral: only implicit TLS (port 465 alone, which a test cannot count on binding) fails its handshake without STARTTLS or ETLS
  if (/certificate|ssl|tls|handshake/i.test(error.message)) return "tls";
  return "connect";
}

/**
 * What the relay said, or the client's message, with the rule behind a TLS failure the operator did
 * not ask for: with `tls: false` TLS is still used when offered, and always needed for the password.
 */
function failureDetail(error: SmtpError, step: SmtpTestStep["step"], settings: SmtpSettings): string {
  const said = error.response || error.message;
  if (step !== "tls" || settings.tls) return said;
  if (error.response && settings.user) return `${said} (the relay offers no STARTTLS, and the password is only sent over TLS: AUTH was not attempted)`;
  return `${said} (STARTTLS offered by the relay is used and verified; trust a private CA with GATEHOUSE_SMTP_CA_FILE)`;
}

/**
 * The transcript as it may leave: every step's text scrubbed of the password here, at the one exit,
 * so no step (present or future) can return the relay's echo of the login exchange.
 */
function report(ok: boolean, steps: SmtpTestStep[], tlsVersion: string, password: string | undefined): SmtpTestResult {
  return { ok, steps: steps.map((s) => ({ ...s, detail: scrubRelayText(s.detail, password) })), tlsVersion };
}

/**
 * Dials a server and sends a test mail, reporting each step: connect, EHLO, TLS (with its version),
 * AUTH, MAIL FROM, RCPT TO, DATA. Time-limited by the client's timeouts; never reports the password.
 */
export async function testSmtp(settings: SmtpSettings, password: string | undefined, client: SmtpClientOptions, receiver: string): Promise<SmtpTestResult> {
  const steps: SmtpTestStep[] = [];
  let tlsVersion = "";
  const options = transportOptions(settings, password, client);
  const connection = new SMTPConnection({ ...options, name: "gatehouse" } as ConstructorParameters<typeof SMTPConnection>[0]);
  const pass = (step: SmtpTestStep["step"], detail: string) => steps.push({ step, ok: true, detail });
  const reached = (step: SmtpTestStep["step"]) => steps.some((s) => s.step === step);
  try {
    await new Promise<void>((resolve, reject) => {
      connection.once("error", reject);
      connection.connect(() => resolve());
    });
    pass("connect", `${options.host}:${options.port}`);
    pass("ehlo", "accepted");
    if (connection.secure) {
      // SMTPConnection exposes no TLS details; its socket (private, but stable across nodemailer
      // releases) is the only place the negotiated version can be read.
      // Stryker disable next-line OptionalChaining,StringLiteral: a secure connection always has a TLS socket whose getProtocol() names the version; the fallbacks never apply
      tlsVersion = ((connection as unknown as { _socket?: TLSSocket })._socket?.getProtocol?.() ?? "") || "";
      pass("tls", tlsVersion);
    }
    if (settings.user) {
      await new Promise<void>((resolve, reject) => connection.login({ user: settings.user, pass: password ?? "" }, (error) => (error ? reject(error) : resolve())));
      pass("auth", "accepted");
    }
    const message = await renderEml({
      messageId: `<smtp-test-${Date.now()}@gatehouse>`,
      from: { name: settings.senderName, address: settings.senderAddress },
      to: receiver,
      date: new Date(),
      mail: { subject: "Gatehouse SMTP test", text: "This is a test mail from Gatehouse.", html: "<p>This is a test mail from Gatehouse.</p>" },
    });
    const info = await new Promise<{ response?: string }>((resolve, reject) =>
      connection.send({ from: settings.senderAddress, to: [receiver] }, message, (error, result) => (error ? reject(error) : resolve(result))),
    );
    pass("mail_from", "accepted");
    pass("rcpt_to", "accepted");
    // Stryker disable next-line StringLiteral: nodemailer's SMTPConnection.send always reports the relay's final reply in info.response
    pass("data", String(info.response ?? "accepted"));
    return report(true, steps, tlsVersion, password);
  } catch (thrown) {
    const error = thrown as SmtpError;
    // A socket error while nodemailer upgrades the session (`upgrading`, set from STARTTLS until the handshake ends)
    // names no command: the connection and EHLO had passed, and it is the TLS step that failed.
    const step = (connection as unknown as { upgrading?: boolean }).upgrading ? "tls" : failedStep(error);
    // Steps before the failed one passed (e.g. a RCPT TO failure means connect through MAIL FROM worked).
    const order: SmtpTestStep["step"][] = ["connect", "ehlo", "tls", "auth", "mail_from", "rcpt_to", "data"];
    for (const earlier of order) {
      if (earlier === step) break;
      if (!reached(earlier) && (earlier !== "tls" || settings.tls) && (earlier !== "auth" || settings.user)) pass(earlier, "accepted");
    }
    steps.push({ step, ok: false, detail: failureDetail(error, step, settings) });
    return report(false, steps, tlsVersion, password);
  } finally {
    connection.close();
  }
}
