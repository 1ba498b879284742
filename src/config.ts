import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { parsePostgresUrl } from "./store/postgres/database-url.js";
import type { Synchronous } from "./store/sqlite/db.js";

/** Gatehouse's configuration; every setting has an environment variable and a command-line flag. */
export interface Config {
  port: number;
  host: string;
  dataDir: string;
  /** PostgreSQL instead of the SQLite file in the data dir: several Gatehouse processes may share it. */
  database?: { url: string; display: string };
  /** The master key file; default `<dataDir>/master.key`. With PostgreSQL every replica reads the same key from here. */
  masterKeyFile?: string;
  /** Base URL for links in mails and responses. */
  externalUrl: string;
  tls?: { certPath: string; keyPath: string };
  logLevel: string;
  dbSynchronous: Synchronous;
  /** Largest accepted request message; larger ones fail with resource_exhausted. */
  maxRequestBytes: number;
  /** Time a client has to send the request headers. */
  headersTimeoutMs: number;
  /** Time a client has to send a whole unary request. */
  requestTimeoutMs: number;
  /** On SIGTERM, how long in-flight calls may take before connections are cut. */
  shutdownTimeoutMs: number;
  /** How long a connection without a request in flight (HTTP/1.1 keep-alive, HTTP/2 session without streams) stays open. */
  idleTimeoutMs: number;
  /** Streams one HTTP/2 connection may have open at once (SETTINGS_MAX_CONCURRENT_STREAMS). */
  http2MaxConcurrentStreams: number;
  /** Server-streaming and bidi calls (Health.Watch, reflection) open at once, server-wide; beyond: resource_exhausted. */
  maxStreamingCalls: number;
  /** Of those, open at once from one remote address; beyond: resource_exhausted `stream.peer_limit_reached`. */
  maxStreamingCallsPerPeer: number;
  /** A server-streaming or bidi call ends (status OK) after this long; clients that want more call again. */
  streamMaxLifetimeMs: number;
  /** Browser origins allowed by CORS (e.g. `https://admin.example.com`); empty: none. */
  corsOrigins: string[];
  mail: {
    /** PEM file of extra CAs trusted for SMTP (a private relay's CA). */
    smtpCaFile?: string;
    smtpTimeoutMs: number;
    pollMs: number;
    maxAttempts: number;
    retryBaseMs: number;
    /** How long a finished (sent or failed) mail is kept in the outbox before the sweep deletes it (default 7 days). */
    retentionMs?: number;
  };
}

export class ConfigError extends Error {
  // Stryker disable next-line StringLiteral: only in stack traces; main.ts tells it by instanceof and prints the message
  override readonly name = "ConfigError";
}

interface Setting {
  flag: string;
  env: string;
  help: string;
  fallback?: string;
}

/** The settings table (README "Configuration" mirrors it). */
const settings = {
  port: { flag: "port", env: "GATEHOUSE_PORT", help: "TCP port to listen on (0: any free port)", fallback: "8080" },
  host: { flag: "host", env: "GATEHOUSE_HOST", help: "address to listen on", fallback: "127.0.0.1" },
  dataDir: { flag: "data-dir", env: "GATEHOUSE_DATA_DIR", help: "directory for the database, the master key and admin.pat", fallback: "./data" },
  databaseUrl: {
    flag: "database-url",
    env: "GATEHOUSE_DATABASE_URL",
    help: "PostgreSQL URL (postgres://user:password@host:port/db) shared by replicas; default: SQLite in the data dir",
  },
  masterKeyFile: { flag: "master-key-file", env: "GATEHOUSE_MASTER_KEY_FILE", help: "master key file (default <data-dir>/master.key); required with --database-url" },
  externalUrl: { flag: "external-url", env: "GATEHOUSE_EXTERNAL_URL", help: "base URL for links in mails and responses (default: http(s)://host:port)" },
  tlsCert: { flag: "tls-cert", env: "GATEHOUSE_TLS_CERT", help: "PEM certificate file; with --tls-key serves TLS (HTTP/2 + HTTP/1.1 by ALPN)" },
  tlsKey: { flag: "tls-key", env: "GATEHOUSE_TLS_KEY", help: "PEM private key file for --tls-cert" },
  logLevel: { flag: "log-level", env: "GATEHOUSE_LOG_LEVEL", help: "fatal, error, warn, info, debug, trace or silent", fallback: "info" },
  dbSynchronous: { flag: "db-synchronous", env: "GATEHOUSE_DB_SYNCHRONOUS", help: "SQLite synchronous mode: FULL (durable on power loss), NORMAL, OFF, EXTRA", fallback: "FULL" },
  maxRequestBytes: { flag: "max-request-bytes", env: "GATEHOUSE_MAX_REQUEST_BYTES", help: "largest accepted request message in bytes", fallback: String(4 * 1024 * 1024) },
  headersTimeoutMs: { flag: "headers-timeout-ms", env: "GATEHOUSE_HEADERS_TIMEOUT_MS", help: "time a client has to send the request headers", fallback: "10000" },
  requestTimeoutMs: { flag: "request-timeout-ms", env: "GATEHOUSE_REQUEST_TIMEOUT_MS", help: "time a client has to send a whole unary request", fallback: "60000" },
  shutdownTimeoutMs: { flag: "shutdown-timeout-ms", env: "GATEHOUSE_SHUTDOWN_TIMEOUT_MS", help: "on SIGTERM/SIGINT, how long in-flight calls may take", fallback: "15000" },
  idleTimeoutMs: { flag: "idle-timeout-ms", env: "GATEHOUSE_IDLE_TIMEOUT_MS", help: "how long an idle connection stays open", fallback: "30000" },
  http2MaxConcurrentStreams: { flag: "http2-max-concurrent-streams", env: "GATEHOUSE_HTTP2_MAX_CONCURRENT_STREAMS", help: "streams one HTTP/2 connection may have open at once", fallback: "100" },
  maxStreamingCalls: { flag: "max-streaming-calls", env: "GATEHOUSE_MAX_STREAMING_CALLS", help: "streaming calls (Health.Watch, reflection) open at once, server-wide", fallback: "500" },
  maxStreamingCallsPerPeer: {
    flag: "max-streaming-calls-per-peer",
    env: "GATEHOUSE_MAX_STREAMING_CALLS_PER_PEER",
    help: "streaming calls open at once from one remote address (keep it below --max-streaming-calls)",
    fallback: "50",
  },
  streamMaxLifetimeMs: { flag: "stream-max-lifetime-ms", env: "GATEHOUSE_STREAM_MAX_LIFETIME_MS", help: "a streaming call ends after this long", fallback: "600000" },
  corsOrigins: { flag: "cors-origins", env: "GATEHOUSE_CORS_ORIGINS", help: "comma-separated browser origins allowed by CORS", fallback: "" },
  smtpCaFile: { flag: "smtp-ca-file", env: "GATEHOUSE_SMTP_CA_FILE", help: "PEM file of extra CAs trusted for SMTP" },
  smtpTimeoutMs: { flag: "smtp-timeout-ms", env: "GATEHOUSE_SMTP_TIMEOUT_MS", help: "SMTP connection and command timeout", fallback: "10000" },
  mailPollMs: { flag: "mail-poll-ms", env: "GATEHOUSE_MAIL_POLL_MS", help: "how often the delivery worker looks for due mails", fallback: "1000" },
  mailMaxAttempts: { flag: "mail-max-attempts", env: "GATEHOUSE_MAIL_MAX_ATTEMPTS", help: "delivery attempts before a mail fails", fallback: "10" },
  mailRetryBaseMs: { flag: "mail-retry-base-ms", env: "GATEHOUSE_MAIL_RETRY_BASE_MS", help: "first retry delay (doubles, with jitter)", fallback: "5000" },
  mailRetentionDays: { flag: "mail-retention-days", env: "GATEHOUSE_MAIL_RETENTION_DAYS", help: "days a sent or failed mail is kept in the outbox (its events stay)", fallback: "7" },
} satisfies Record<string, Setting>;

const logLevels = ["fatal", "error", "warn", "info", "debug", "trace", "silent"];
const synchronousModes: Synchronous[] = ["OFF", "NORMAL", "FULL", "EXTRA"];

function integer(name: string, raw: string, min: number, max: number): number {
  const value = Number(raw);
  if (!/^\d+$/.test(raw) || value < min || value > max) throw new ConfigError(`${name} must be an integer from ${min} to ${max}, got "${raw}"`);
  return value;
}

const isOrigin = (text: string): boolean => URL.canParse(text) && new URL(text).origin === text;

/** A comma-separated list of origins (`scheme://host[:port]`, no path). */
function corsOrigins(source: string, raw: string): string[] {
  const origins = raw.split(",").map((o) => o.trim()).filter(Boolean);
  for (const origin of origins) {
    if (!isOrigin(origin)) throw new ConfigError(`${source}: "${origin}" is not an origin like https://admin.example.com`);
  }
  return origins;
}

/** Reads the configuration from flags (which win) and environment variables. Throws ConfigError. */
export function loadConfig(argv: string[], env: NodeJS.ProcessEnv = process.env): Config {
  const options = Object.fromEntries(Object.values(settings).map((s) => [s.flag, { type: "string" as const }]));
  let flags: Record<string, string | undefined>;
  try {
    flags = parseArgs({ args: argv, options, strict: true, allowPositionals: false }).values as Record<string, string | undefined>;
  } catch (error) {
    throw new ConfigError((error as Error).message);
  }
  const read = (setting: Setting): string | undefined => flags[setting.flag] ?? (env[setting.env] || undefined) ?? setting.fallback;
  // Errors name where the bad value came from: the flag, else the variable.
  const from = (setting: Setting): string => (flags[setting.flag] !== undefined ? `--${setting.flag}` : setting.env);
  const required = (setting: Setting): string => read(setting) as string;

  const port = integer(from(settings.port), required(settings.port), 0, 65535);
  const host = required(settings.host);
  const logLevel = required(settings.logLevel);
  if (!logLevels.includes(logLevel)) throw new ConfigError(`${from(settings.logLevel)} must be one of ${logLevels.join(", ")}`);
  const dbSynchronous = required(settings.dbSynchronous).toUpperCase() as Synchronous;
  if (!synchronousModes.includes(dbSynchronous)) throw new ConfigError(`${from(settings.dbSynchronous)} must be one of ${synchronousModes.join(", ")}`);
  const certPath = read(settings.tlsCert);
  const keyPath = read(settings.tlsKey);
  if (Boolean(certPath) !== Boolean(keyPath)) throw new ConfigError("--tls-cert and --tls-key (GATEHOUSE_TLS_CERT, GATEHOUSE_TLS_KEY) go together");
  const scheme = certPath ? "https" : "http";
  const urlHost = host.includes(":") ? `[${host}]` : host;
  const externalUrl = (read(settings.externalUrl) ?? `${scheme}://${urlHost}:${port}`).replace(/\/+$/, "");
  try {
    new URL(externalUrl);
  } catch {
    throw new ConfigError(`${from(settings.externalUrl)} must be an absolute URL, got "${externalUrl}"`);
  }
  const databaseUrl = read(settings.databaseUrl);
  // (parsePostgresUrl finds no URL in a missing one either, so the `true` mutant is equivalent; the test is for the type.)
  const database = databaseUrl !== undefined ? parsePostgresUrl(databaseUrl) : undefined;
  if (databaseUrl !== undefined && database === undefined) throw new ConfigError(`${from(settings.databaseUrl)} must be a postgres:// or postgresql:// URL`);
  const masterKeyFile = read(settings.masterKeyFile);
  // Replicas share one database, so they must share its key: none may make up its own.
  if (database && masterKeyFile === undefined) throw new ConfigError("--database-url (GATEHOUSE_DATABASE_URL) needs --master-key-file (GATEHOUSE_MASTER_KEY_FILE): every replica reads the same key");
  return {
    port,
    host,
    dataDir: resolve(required(settings.dataDir)),
    ...(database ? { database } : {}),
    ...(masterKeyFile !== undefined ? { masterKeyFile: resolve(masterKeyFile) } : {}),
    externalUrl,
    // Stryker disable next-line LogicalOperator: a certificate without a key (or the reverse) was refused above
    ...(certPath && keyPath ? { tls: { certPath, keyPath } } : {}),
    logLevel,
    dbSynchronous,
    maxRequestBytes: integer(from(settings.maxRequestBytes), required(settings.maxRequestBytes), 1024, 1024 ** 3),
    headersTimeoutMs: integer(from(settings.headersTimeoutMs), required(settings.headersTimeoutMs), 100, 3_600_000),
    requestTimeoutMs: integer(from(settings.requestTimeoutMs), required(settings.requestTimeoutMs), 100, 3_600_000),
    shutdownTimeoutMs: integer(from(settings.shutdownTimeoutMs), required(settings.shutdownTimeoutMs), 0, 3_600_000),
    idleTimeoutMs: integer(from(settings.idleTimeoutMs), required(settings.idleTimeoutMs), 100, 3_600_000),
    http2MaxConcurrentStreams: integer(from(settings.http2MaxConcurrentStreams), required(settings.http2MaxConcurrentStreams), 1, 10_000),
    maxStreamingCalls: integer(from(settings.maxStreamingCalls), required(settings.maxStreamingCalls), 1, 1_000_000),
    maxStreamingCallsPerPeer: integer(from(settings.maxStreamingCallsPerPeer), required(settings.maxStreamingCallsPerPeer), 1, 1_000_000),
    streamMaxLifetimeMs: integer(from(settings.streamMaxLifetimeMs), required(settings.streamMaxLifetimeMs), 100, 86_400_000),
    corsOrigins: corsOrigins(from(settings.corsOrigins), required(settings.corsOrigins)),
    mail: {
      ...(read(settings.smtpCaFile) ? { smtpCaFile: read(settings.smtpCaFile) } : {}),
      smtpTimeoutMs: integer(from(settings.smtpTimeoutMs), required(settings.smtpTimeoutMs), 100, 600_000),
      pollMs: integer(from(settings.mailPollMs), required(settings.mailPollMs), 10, 3_600_000),
      maxAttempts: integer(from(settings.mailMaxAttempts), required(settings.mailMaxAttempts), 1, 100),
      retryBaseMs: integer(from(settings.mailRetryBaseMs), required(settings.mailRetryBaseMs), 10, 3_600_000),
      // At least a day: the hosted pages' new-code limit counts the code mails of the last hour.
      retentionMs: integer(from(settings.mailRetentionDays), required(settings.mailRetentionDays), 1, 3650) * 86_400_000,
    },
  };
}

/** The settings table as `gatehouse serve --help` shows it. */
export function describeSettings(): string {
  return Object.values(settings as Record<string, Setting>)
    .map((setting) => `  --${setting.flag} <value>`.padEnd(42) + `${setting.help}\n`.padEnd(0) + `${"".padEnd(42)}${setting.env}${setting.fallback !== undefined && setting.fallback !== "" ? ` (default ${setting.fallback})` : ""}`)
    .join("\n");
}

/** Files Gatehouse keeps in its data directory. */
export function dataFiles(config: Pick<Config, "dataDir">) {
  return {
    database: join(config.dataDir, "gatehouse.db"),
    masterKey: join(config.dataDir, "master.key"),
    adminToken: join(config.dataDir, "admin.pat"),
    mailDir: join(config.dataDir, "mail"),
  };
}
