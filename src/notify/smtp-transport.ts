import nodemailer from "nodemailer";
import type SMTPTransport from "nodemailer/lib/smtp-transport/index.js";
import { parseSmtpHost, type SmtpSettings } from "../domain/smtp.js";
import type { RenderedMail } from "./templates.js";

/** Extra trust for SMTP servers with a private CA (GATEHOUSE_SMTP_CA_FILE), and time limits. */
export interface SmtpClientOptions {
  ca?: Buffer;
  timeoutMs: number;
}

/**
 * nodemailer options for a configuration. `tls: true` means TLS is REQUIRED: implicit TLS on port
 * 465, STARTTLS everywhere else (a server without STARTTLS fails instead of getting mail in clear).
 * `tls: false` means no TLS at all.
 */
export function transportOptions(settings: SmtpSettings, password: string | undefined, client: SmtpClientOptions): SMTPTransport.Options {
  const { hostname, port } = parseSmtpHost(settings.host);
  const implicit = settings.tls && port === 465;
  return {
    host: hostname,
    port,
    secure: implicit,
    requireTLS: settings.tls && !implicit,
    ignoreTLS: !settings.tls,
    ...(settings.user ? { auth: { user: settings.user, pass: password ?? "" } } : {}),
    tls: { servername: hostname, minVersion: "TLSv1.2", ...(client.ca ? { ca: client.ca } : {}) },
    connectionTimeout: client.timeoutMs,
    greetingTimeout: client.timeoutMs,
    socketTimeout: client.timeoutMs,
  };
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

/** Sends one message through a configuration. Throws nodemailer's error (with responseCode) on failure. */
export async function sendMail(settings: SmtpSettings, password: string | undefined, client: SmtpClientOptions, message: OutgoingMail) {
  const transport = nodemailer.createTransport(transportOptions(settings, password, client));
  try {
    return await transport.sendMail(messageFields(message));
  } finally {
    transport.close();
  }
}

/** The message as an RFC 5322 file (.eml), for when no SMTP server is configured. */
export async function renderEml(message: OutgoingMail): Promise<Buffer> {
  const transport = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: "unix" });
  const info = await transport.sendMail(messageFields(message));
  return info.message as Buffer;
}
