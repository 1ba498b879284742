import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { type Config, ConfigError, dataFiles, describeSettings, loadConfig } from "../../src/config.js";

// Every setting has a GATEHOUSE_* variable and a flag (the flag wins); a bad value is a ConfigError naming
// where it came from — the flag if given, else the variable — so `serve` can print it and exit 2.

/** The ConfigError loadConfig throws for these inputs. */
function configError(argv: string[], env: Record<string, string>): string {
  try {
    loadConfig(argv, env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as ConfigError).message;
  }
  throw new Error(`expected a ConfigError for ${JSON.stringify({ argv, env })}`);
}

type Pick = (config: Config) => number;
// flag, variable, default, min, max, where it lands
const integers: [string, string, number, number, number, Pick][] = [
  ["port", "GATEHOUSE_PORT", 8080, 0, 65535, (c) => c.port],
  ["max-request-bytes", "GATEHOUSE_MAX_REQUEST_BYTES", 4 * 1024 * 1024, 1024, 1024 ** 3, (c) => c.maxRequestBytes],
  ["headers-timeout-ms", "GATEHOUSE_HEADERS_TIMEOUT_MS", 10_000, 100, 3_600_000, (c) => c.headersTimeoutMs],
  ["request-timeout-ms", "GATEHOUSE_REQUEST_TIMEOUT_MS", 60_000, 100, 3_600_000, (c) => c.requestTimeoutMs],
  ["shutdown-timeout-ms", "GATEHOUSE_SHUTDOWN_TIMEOUT_MS", 15_000, 0, 3_600_000, (c) => c.shutdownTimeoutMs],
  ["idle-timeout-ms", "GATEHOUSE_IDLE_TIMEOUT_MS", 30_000, 100, 3_600_000, (c) => c.idleTimeoutMs],
  ["http2-max-concurrent-streams", "GATEHOUSE_HTTP2_MAX_CONCURRENT_STREAMS", 100, 1, 10_000, (c) => c.http2MaxConcurrentStreams],
  ["max-streaming-calls", "GATEHOUSE_MAX_STREAMING_CALLS", 500, 1, 1_000_000, (c) => c.maxStreamingCalls],
  ["max-streaming-calls-per-peer", "GATEHOUSE_MAX_STREAMING_CALLS_PER_PEER", 50, 1, 1_000_000, (c) => c.maxStreamingCallsPerPeer],
  ["stream-max-lifetime-ms", "GATEHOUSE_STREAM_MAX_LIFETIME_MS", 600_000, 100, 86_400_000, (c) => c.streamMaxLifetimeMs],
  ["smtp-timeout-ms", "GATEHOUSE_SMTP_TIMEOUT_MS", 10_000, 100, 600_000, (c) => c.mail.smtpTimeoutMs],
  ["mail-poll-ms", "GATEHOUSE_MAIL_POLL_MS", 1_000, 10, 3_600_000, (c) => c.mail.pollMs],
  ["mail-max-attempts", "GATEHOUSE_MAIL_MAX_ATTEMPTS", 10, 1, 100, (c) => c.mail.maxAttempts],
  ["mail-retry-base-ms", "GATEHOUSE_MAIL_RETRY_BASE_MS", 5_000, 10, 3_600_000, (c) => c.mail.retryBaseMs],
  // Days in, milliseconds out.
  ["mail-retention-days", "GATEHOUSE_MAIL_RETENTION_DAYS", 7, 1, 3650, (c) => (c.mail.retentionMs ?? 0) / 86_400_000],
];

describe.each(integers)("--%s / %s", (flag, env, fallback, min, max, pick) => {
  const range = (source: string, raw: string) => `${source} must be an integer from ${min} to ${max}, got "${raw}"`;

  it(`defaults to ${fallback}; an empty variable counts as unset`, () => {
    expect(pick(loadConfig([], {}))).toBe(fallback);
    expect(pick(loadConfig([], { [env]: "" }))).toBe(fallback);
  });

  it(`accepts ${min} and ${max}, from the variable and from the flag (which wins)`, () => {
    expect(pick(loadConfig([], { [env]: String(min) }))).toBe(min);
    expect(pick(loadConfig([`--${flag}`, String(max)], { [env]: String(min) }))).toBe(max);
  });

  it("refuses a value out of range or not a whole number, naming the variable or the flag", () => {
    if (min > 0) expect(configError([], { [env]: String(min - 1) })).toBe(range(env, String(min - 1)));
    expect(configError([`--${flag}`, String(max + 1)], { [env]: String(min) })).toBe(range(`--${flag}`, String(max + 1)));
    for (const raw of ["-1", "1.5", " 200", "2e3", "abc"]) expect(configError([], { [env]: raw })).toBe(range(env, raw));
  });
});

describe("text settings", () => {
  it("--host / GATEHOUSE_HOST: 127.0.0.1 by default; an IPv6 host is bracketed in the default external URL", () => {
    expect(loadConfig([], {}).host).toBe("127.0.0.1");
    expect(loadConfig([], { GATEHOUSE_HOST: "0.0.0.0" })).toMatchObject({ host: "0.0.0.0", externalUrl: "http://0.0.0.0:8080" });
    expect(loadConfig(["--host", "::1", "--port", "9443"], { GATEHOUSE_HOST: "0.0.0.0" })).toMatchObject({ host: "::1", externalUrl: "http://[::1]:9443" });
  });

  it("--data-dir / GATEHOUSE_DATA_DIR: ./data by default, always made absolute", () => {
    expect(loadConfig([], {}).dataDir).toBe(resolve("data"));
    expect(loadConfig([], { GATEHOUSE_DATA_DIR: "/srv/gatehouse" }).dataDir).toBe("/srv/gatehouse");
    expect(loadConfig(["--data-dir", "rel/dir"], { GATEHOUSE_DATA_DIR: "/srv/gatehouse" }).dataDir).toBe(resolve("rel/dir"));
  });

  it("--log-level / GATEHOUSE_LOG_LEVEL: each pino level or silent; anything else names its source and the choices", () => {
    expect(loadConfig([], {}).logLevel).toBe("info");
    for (const level of ["fatal", "error", "warn", "info", "debug", "trace", "silent"]) expect(loadConfig([], { GATEHOUSE_LOG_LEVEL: level }).logLevel).toBe(level);
    expect(configError([], { GATEHOUSE_LOG_LEVEL: "DEBUG" })).toBe("GATEHOUSE_LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent");
    expect(configError(["--log-level", "loud"], {})).toBe("--log-level must be one of fatal, error, warn, info, debug, trace, silent");
  });

  it("--db-synchronous / GATEHOUSE_DB_SYNCHRONOUS: FULL by default, any case; anything else names its source", () => {
    expect(loadConfig([], {}).dbSynchronous).toBe("FULL");
    for (const mode of ["off", "Normal", "FULL", "extra"]) expect(loadConfig([], { GATEHOUSE_DB_SYNCHRONOUS: mode }).dbSynchronous).toBe(mode.toUpperCase());
    expect(configError([], { GATEHOUSE_DB_SYNCHRONOUS: "sometimes" })).toBe("GATEHOUSE_DB_SYNCHRONOUS must be one of OFF, NORMAL, FULL, EXTRA");
    expect(configError(["--db-synchronous", "fast"], {})).toBe("--db-synchronous must be one of OFF, NORMAL, FULL, EXTRA");
  });

  it("--tls-cert and --tls-key go together and switch the default external URL to https", () => {
    expect(loadConfig([], {}).tls).toBeUndefined();
    expect(loadConfig([], { GATEHOUSE_TLS_CERT: "/c.pem", GATEHOUSE_TLS_KEY: "/k.pem" })).toMatchObject({ tls: { certPath: "/c.pem", keyPath: "/k.pem" }, externalUrl: "https://127.0.0.1:8080" });
    expect(loadConfig(["--tls-cert", "/c2.pem", "--tls-key", "/k2.pem"], {}).tls).toEqual({ certPath: "/c2.pem", keyPath: "/k2.pem" });
    const together = "--tls-cert and --tls-key (GATEHOUSE_TLS_CERT, GATEHOUSE_TLS_KEY) go together";
    expect(configError([], { GATEHOUSE_TLS_CERT: "/c.pem" })).toBe(together);
    expect(configError(["--tls-key", "/k.pem"], {})).toBe(together);
  });

  it("--external-url / GATEHOUSE_EXTERNAL_URL: trailing slashes dropped; not an absolute URL names its source", () => {
    expect(loadConfig([], { GATEHOUSE_EXTERNAL_URL: "https://id.example.com/base//" }).externalUrl).toBe("https://id.example.com/base");
    expect(configError([], { GATEHOUSE_EXTERNAL_URL: "id.example.com" })).toBe('GATEHOUSE_EXTERNAL_URL must be an absolute URL, got "id.example.com"');
    expect(configError(["--external-url", "/relative"], {})).toBe('--external-url must be an absolute URL, got "/relative"');
  });

  it("--cors-origins / GATEHOUSE_CORS_ORIGINS: none by default; a trimmed comma list of bare origins", () => {
    expect(loadConfig([], {}).corsOrigins).toEqual([]);
    expect(loadConfig([], { GATEHOUSE_CORS_ORIGINS: " https://a.example.com , ,http://localhost:5173," }).corsOrigins).toEqual(["https://a.example.com", "http://localhost:5173"]);
    expect(configError([], { GATEHOUSE_CORS_ORIGINS: "https://a.example.com/app" })).toBe('GATEHOUSE_CORS_ORIGINS: "https://a.example.com/app" is not an origin like https://admin.example.com');
    expect(configError(["--cors-origins", "a.example.com"], {})).toBe('--cors-origins: "a.example.com" is not an origin like https://admin.example.com');
  });

  it("--smtp-ca-file / GATEHOUSE_SMTP_CA_FILE: absent by default, else the path (the flag wins)", () => {
    expect("smtpCaFile" in loadConfig([], {}).mail).toBe(false);
    expect(loadConfig([], { GATEHOUSE_SMTP_CA_FILE: "/ca.pem" }).mail.smtpCaFile).toBe("/ca.pem");
    expect(loadConfig(["--smtp-ca-file", "/flag-ca.pem"], { GATEHOUSE_SMTP_CA_FILE: "/ca.pem" }).mail.smtpCaFile).toBe("/flag-ca.pem");
  });

  it("an unknown flag, a flag without its value, or a stray argument: a ConfigError", () => {
    expect(configError(["--no-such-setting", "1"], {})).toMatch(/no-such-setting/);
    expect(configError(["--port"], {})).toMatch(/--port/);
    expect(configError(["serve"], {})).toMatch(/serve/);
  });
});

describe("describeSettings and dataFiles", () => {
  it("lists every flag with its variable, and its default where it has one", () => {
    const text = describeSettings();
    for (const [flag, env, fallback] of integers) {
      expect(text).toContain(`--${flag} <value>`);
      expect(text).toContain(`${env} (default ${fallback})`);
    }
    expect(text).toContain("GATEHOUSE_DATA_DIR (default ./data)");
    // Two lines per setting, the help and the variable aligned in one column for `serve --help`.
    expect(text.split("\n").slice(0, 2)).toEqual([`${"  --port <value>".padEnd(42)}TCP port to listen on (0: any free port)`, `${" ".repeat(42)}GATEHOUSE_PORT (default 8080)`]);
    // No default shown where there is none (or it is empty).
    expect(text).toMatch(/GATEHOUSE_TLS_CERT$/m);
    expect(text).toMatch(/GATEHOUSE_CORS_ORIGINS$/m);
  });

  it("names the files of a data dir", () => {
    expect(dataFiles({ dataDir: "/d" })).toEqual({ database: "/d/gatehouse.db", masterKey: "/d/master.key", adminToken: "/d/admin.pat", mailDir: "/d/mail" });
  });
});
