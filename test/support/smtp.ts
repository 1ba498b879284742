import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SMTPServer } from "smtp-server";

/** A test certificate authority and a server certificate for localhost / 127.0.0.1 signed by it. */
export function makeTestCa(): { caFile: string; key: Buffer; cert: Buffer } {
  const dir = mkdtempSync(join(tmpdir(), "gatehouse-ca-"));
  const run = (...args: string[]) => execFileSync("openssl", args, { cwd: dir, stdio: "ignore" });
  run("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1", "-subj", "/CN=Gatehouse Test CA", "-keyout", "ca.key", "-out", "ca.pem");
  run("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-subj", "/CN=localhost", "-keyout", "server.key", "-out", "server.csr");
  execFileSync("sh", ["-c", "printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\\n' > ext.cnf"], { cwd: dir });
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
  /** Resolves with the first received mail that matches, waiting up to `timeoutMs`. */
  waitFor(match: (mail: ReceivedMail) => boolean, timeoutMs?: number): Promise<ReceivedMail>;
  close(): Promise<void>;
}

export interface SmtpServerOptions {
  /** none: no TLS offered; starttls: STARTTLS offered; implicit: TLS from the first byte. */
  tls: "none" | "starttls" | "implicit";
  certificate?: { key: Buffer; cert: Buffer };
  /** When set, AUTH is required and only these credentials pass. */
  auth?: { user: string; pass: string };
  /** Recipients answered with 550 (mailbox unavailable). */
  rejectRecipients?: string[];
  port?: number;
}

/** A real SMTP server (the smtp-server package) on 127.0.0.1 that records what it accepts. */
export async function startSmtpServer(options: SmtpServerOptions): Promise<TestSmtpServer> {
  const received: ReceivedMail[] = [];
  const server = new SMTPServer({
    secure: options.tls === "implicit",
    ...(options.certificate ? { key: options.certificate.key, cert: options.certificate.cert } : {}),
    disabledCommands: options.tls === "none" ? ["STARTTLS"] : [],
    authOptional: !options.auth,
    hideSTARTTLS: options.tls === "none",
    logger: false,
    onAuth(auth, _session, callback) {
      if (options.auth && auth.username === options.auth.user && auth.password === options.auth.pass) callback(null, { user: auth.username });
      else callback(Object.assign(new Error("Invalid username or password"), { responseCode: 535 }));
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
        callback();
      });
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, "127.0.0.1", () => resolve());
  });
  const port = ((server as unknown as { server: { address(): AddressInfo } }).server.address()).port;
  return {
    port,
    received,
    async waitFor(match, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const found = received.find(match);
        if (found) return found;
        if (Date.now() > deadline) throw new Error(`no matching mail within ${timeoutMs} ms (received ${received.length})`);
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** The email verification code in a received raw message (its text part). */
export function codeInRaw(raw: string): string | undefined {
  return /Confirm your email address with this code[^\n]*\r?\n\s+([A-Z0-9]{6})\r?\n/.exec(raw.replace(/=\r?\n/g, ""))?.[1];
}
