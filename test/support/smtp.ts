import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SMTPServer } from "smtp-server";
import { eventually } from "./eventually.js";

/** A test certificate authority and a server certificate for localhost / 127.0.0.1 (and `extraIps`) signed by it. */
export function makeTestCa(extraIps: string[] = []): { caFile: string; key: Buffer; cert: Buffer } {
  const dir = mkdtempSync(join(tmpdir(), "gatehouse-ca-"));
  const run = (...args: string[]) => execFileSync("openssl", args, { cwd: dir, stdio: "ignore" });
  run("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1", "-subj", "/CN=Gatehouse Test CA", "-keyout", "ca.key", "-out", "ca.pem");
  run("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-subj", "/CN=localhost", "-keyout", "server.key", "-out", "server.csr");
  const names = ["DNS:localhost", "IP:127.0.0.1", ...extraIps.map((ip) => `IP:${ip}`)].join(",");
  writeFileSync(join(dir, "ext.cnf"), `subjectAltName=${names}\n`);
  run("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-days", "1", "-extfile", "ext.cnf", "-out", "server.pem");
  return { caFile: join(dir, "ca.pem"), key: readFileSync(join(dir, "server.key")), cert: readFileSync(join(dir, "server.pem")) };
}

export interface ReceivedMail {
  from: string;
  to: string[];
  raw: string;
  secure: boolean;
  user: string | undefined;
}

export interface TestSmtpServer {
  port: number;
  received: ReceivedMail[];
  /** Every AUTH the client sent (accepted or not), and whether the session was encrypted when it came. */
  logins: { method: string; username: string; secure: boolean }[];
  /** Resolves with the first received mail that matches, waiting up to `timeoutMs`. */
  waitFor(match: (mail: ReceivedMail) => boolean, timeoutMs?: number): Promise<ReceivedMail>;
  close(): Promise<void>;
}

/** What the client sent in AUTH (smtp-server decodes PLAIN blobs and LOGIN lines for us). */
export interface SmtpAuthAttempt {
  method: string;
  username: string;
  password: string;
}

export interface SmtpServerOptions {
  /** none: no TLS offered; starttls: STARTTLS offered; implicit: TLS from the first byte. */
  tls: "none" | "starttls" | "implicit";
  certificate?: { key: Buffer; cert: Buffer };
  /** When set, AUTH is required and only these credentials pass. */
  auth?: { user: string; pass: string };
  /** SASL mechanisms offered, in order (the client takes the first); smtp-server's default is PLAIN, LOGIN. */
  authMethods?: ("PLAIN" | "LOGIN")[];
  /** The text of the 535 answer to rejected credentials, made from what the client sent (a relay that echoes the login). */
  rejectAuthWith?: (attempt: SmtpAuthAttempt) => string;
  /** The text of the 250 answer to an accepted message, made from the session's AUTH (a relay that echoes it there). */
  acceptDataWith?: (attempt: SmtpAuthAttempt | undefined) => string;
  /** Recipients answered with 550 (mailbox unavailable). */
  rejectRecipients?: string[];
  port?: number;
  /** A loopback address to listen on (default 127.0.0.1): a fixed port such as 465 on an address of its own. */
  host?: string;
}

/**
 * A random address of 127.0.0.0/8 (all of it is loopback on Linux), so a test that needs a fixed port (465, which
 * means implicit TLS) never collides with another process running the same test at the same time.
 */
export const randomLoopbackAddress = (): string =>
  `127.${1 + Math.floor(Math.random() * 254)}.${Math.floor(Math.random() * 256)}.${1 + Math.floor(Math.random() * 254)}`;

/** A real SMTP server (the smtp-server package) on 127.0.0.1 that records what it accepts. */
export async function startSmtpServer(options: SmtpServerOptions): Promise<TestSmtpServer> {
  const received: ReceivedMail[] = [];
  const logins: TestSmtpServer["logins"] = [];
  const attempts = new Map<string, SmtpAuthAttempt>();
  const server = new SMTPServer({
    secure: options.tls === "implicit",
    ...(options.certificate ? { key: options.certificate.key, cert: options.certificate.cert } : {}),
    disabledCommands: options.tls === "none" ? ["STARTTLS"] : [],
    authOptional: !options.auth,
    hideSTARTTLS: options.tls === "none",
    logger: false,
    ...(options.authMethods ? { authMethods: options.authMethods } : {}),
    onAuth(auth, session, callback) {
      const attempt = { method: auth.method, username: auth.username ?? "", password: auth.password ?? "" };
      attempts.set(session.id, attempt);
      logins.push({ method: attempt.method, username: attempt.username, secure: session.secure });
      if (options.auth && attempt.username === options.auth.user && attempt.password === options.auth.pass) callback(null, { user: attempt.username });
      else callback(Object.assign(new Error(options.rejectAuthWith?.(attempt) ?? "Invalid username or password"), { responseCode: 535 }));
    },
    onRcptTo(address, _session, callback) {
      if (options.rejectRecipients?.includes(address.address)) callback(Object.assign(new Error("Mailbox unavailable"), { responseCode: 550 }));
      else callback();
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on("data", (chunk: Buffer) => chunks.push(chunk));
      stream.on("end", () => {
        received.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : "",
          to: session.envelope.rcptTo.map((r) => r.address),
          raw: Buffer.concat(chunks).toString("utf8"),
          secure: session.secure,
          user: typeof session.user === "string" ? session.user : undefined,
        });
        if (options.acceptDataWith) callback(null, options.acceptDataWith(attempts.get(session.id)));
        else callback();
      });
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, options.host ?? "127.0.0.1", () => resolve());
  });
  const port = ((server as unknown as { server: { address(): AddressInfo } }).server.address()).port;
  return {
    port,
    received,
    logins,
    waitFor: (match, timeoutMs = 10_000) => eventually(() => received.find(match), { what: "a matching mail at the test relay", timeoutMs }),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** The email verification code in a received raw message (its text part). */
export function codeInRaw(raw: string): string | undefined {
  return /Confirm your email address with this code[^\n]*\r?\n\s+([A-Z0-9]{6})\r?\n/.exec(raw.replace(/=\r?\n/g, ""))?.[1];
}

const base64 = (text: string) => Buffer.from(text, "utf8").toString("base64");

/**
 * What a careless relay says about a login: the password plain, base64 on its own, inside the AUTH
 * PLAIN blob (with and without authorization identity, so the password sits at different byte
 * alignments), glued to a word, and the AUTH LOGIN exchange. Control characters become spaces on
 * the wire (smtp-server), which leaves the plain password intact.
 */
export function echoOfLogin(attempt: SmtpAuthAttempt): string {
  const { username, password } = attempt;
  const blob = base64(`\0${username}\0${password}`);
  return [
    `auth failed for \0${username}\0${password}`,
    `AUTH PLAIN ${blob}`,
    `with authzid ${base64(`${username}\0${username}\0${password}`)}`,
    `glued x${blob}`,
    `AUTH LOGIN ${base64(username)} ${base64(password)}`,
    `url-safe ${Buffer.from(password).toString("base64url")}`,
  ].join("; ");
}

/**
 * Where `password` can still be read in `text`: plain (any case), or decoded from any base64 run
 * at any of the four character offsets (which finds it inside AUTH PLAIN blobs and glued tokens).
 */
export function passwordLeaks(text: string, password: string): string[] {
  const leaks: string[] = [];
  if (text.toLowerCase().includes(password.toLowerCase())) leaks.push("plain");
  const secret = Buffer.from(password);
  for (const run of text.match(/[A-Za-z0-9+/_-]{4,}/g) ?? []) {
    for (let offset = 0; offset < 4; offset++) {
      if (Buffer.from(run.slice(offset), "base64").includes(secret)) leaks.push(`base64 ${run}`);
    }
  }
  return leaks;
}
