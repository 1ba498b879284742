import { isIP } from "node:net";
import nodemailer from "nodemailer";
import type SMTPTransport from "nodemailer/lib/smtp-transport/index.js";
import { parseSmtpHost, type SmtpSettings } from "../domain/smtp.js";
import { scrubRelayText } from "./relay-text.js";
import type { RenderedMail } from "./templates.js";

/** Extra trust for SMTP servers with a private CA (GATEHOUSE_SMTP_CA_FILE), and time limits. */
export interface SmtpClientOptions {
  ca?: Buffer;
  timeoutMs: number;
}

/**
 * nodemailer options for a configuration. `tls: true` means TLS is REQUIRED: implicit TLS on port
 * 465, STARTTLS everywhere else (a server without STARTTLS fails instead of getting mail in clear).
 * `tls: false` means TLS is not required, but still used: STARTTLS whenever the relay offers it,
 * with the same certificate verification (a relay whose certificate does not verify fails the
 * attempt rather than falling back to clear text, which would hand the mail to exactly the
 * man-in-the-middle the check caught; a private CA is trusted through GATEHOUSE_SMTP_CA_FILE).
 * The password never goes out in clear: a configuration with a user needs TLS for its AUTH, so
 * with `tls: false` a relay that offers no STARTTLS fails the attempt before AUTH is sent.
 */
export function transportOptions(settings: SmtpSettings, password: string | undefined, client: SmtpClientOptions): SMTPTransport.Options {
  const { hostname, port } = parseSmtpHost(settings.host);
  const implicit = settings.tls && port === 465;
  const sendsCredentials = settings.user !== "";
  return {
    host: hostname,
    port,
    secure: implicit,
    requireTLS: !implicit && (settings.tls || sendsCredentials),
    ...(settings.user ? { auth: { user: settings.user, pass: password ?? "" } } : {}),
    // SNI takes names only (an IP address there is deprecated in Node); the certificate is still checked against the IP.
    tls: {
      // Stryker disable next-line ObjectLiteral: nodemailer sets the same servername itself (the host, unless it is an IP address); stated here for the reader
      ...(isIP(hostname) ? {} : { servername: hostname }),
      minVersion: "TLSv1.2",
      ...(client.ca ? { ca: client.ca } : {}),
    },
    connectionTimeout: client.timeoutMs,
    greetingTimeout: client.timeoutMs,
    socketTimeout: client.timeoutMs,
    // nodemailer's own transcript would carry the relay's words unscrubbed: it stays off.
    logger: false,
    // Stryker disable next-line BooleanLiteral: with logger: false nodemailer has no logger to write debug lines to
    debug: false,
  };
}

/**
 * The only error that leaves the SMTP client: nodemailer's code, reply code and command, with the
 * relay's words scrubbed of the password. It is a new error without `cause`, so no logger or
 * serializer can reach the original text through it.
 */
export class SmtpRelayError extends Error {
  // Stryker disable next-line StringLiteral: only in stack traces; every caller reports the message, code and reply code
  override name = "SmtpRelayError";
  constructor(
    message: string,
    readonly code: string | undefined,
    readonly responseCode: number | undefined,
    readonly command: string | undefined,
    readonly response: string | undefined,
  ) {
    super(message);
  }
}

/** `error` (thrown by nodemailer or a socket) as an {@link SmtpRelayError} without the password. */
export function relayError(error: unknown, password: string | undefined): SmtpRelayError {
  const { code, responseCode, command, response } = (typeof error === "object" && error !== null ? error : {}) as Record<string, unknown>;
  const text = (value: unknown) => (typeof value === "string" ? scrubRelayText(value, password) : undefined);
  return new SmtpRelayError(
    scrubRelayText(error instanceof Error ? error.message : String(error), password),
    typeof code === "string" ? code : undefined,
    typeof responseCode === "number" ? responseCode : undefined,
    text(command),
    text(response),
  );
}

export interface OutgoingMail {
  messageId: string;
  from: { name: string; address: string };
  to: string;
  date: Date;
  mail: RenderedMail;
}

/** nodemailer's message fields: From with name, Date, a stable Message-ID (so a resend can be recognized). */
export function messageFields(message: OutgoingMail) {
  return {
    messageId: message.messageId,
    from: message.from,
    to: message.to,
    date: message.date,
    subject: message.mail.subject,
    text: message.mail.text,
    html: message.mail.html,
  };
}

/**
 * Sends one message through a configuration. Resolves with the relay's reply, throws an
 * {@link SmtpRelayError} (with responseCode): both scrubbed of the password.
 */
export async function sendMail(settings: SmtpSettings, password: string | undefined, client: SmtpClientOptions, message: OutgoingMail): Promise<{ response: string }> {
  const transport = nodemailer.createTransport(transportOptions(settings, password, client));
  try {
    const info = await transport.sendMail(messageFields(message));
    // Stryker disable next-line StringLiteral: nodemailer's SMTP transport always reports the relay's final reply in info.response
    return { response: scrubRelayText(String(info.response ?? ""), password) };
  } catch (error) {
    // Stryker disable BlockStatement: the finally below: a transport without a pool ends its connection after each message; close() only frees OAuth2 listeners, which this one has none of (a range: Stryker reads only a comment that leads a statement, and none leads a `catch`/`finally`)
    throw relayError(error, password);
  } finally {
    transport.close();
  }
}

// Stryker restore BlockStatement
/** The message as an RFC 5322 file (.eml), for when no SMTP server is configured. */
export async function renderEml(message: OutgoingMail): Promise<Buffer> {
  const transport = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: "unix" });
  const info = await transport.sendMail(messageFields(message));
  return info.message as Buffer;
}
