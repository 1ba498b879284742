import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../src/config.js";

describe("configuration", () => {
  it("has embedded defaults: 127.0.0.1:8080, ./data, synchronous FULL", () => {
    const config = loadConfig([], {});
    expect(config).toMatchObject({ port: 8080, host: "127.0.0.1", dbSynchronous: "FULL", logLevel: "info", externalUrl: "http://127.0.0.1:8080" });
    expect(config.dataDir).toMatch(/\/data$/);
    expect(config.tls).toBeUndefined();
  });

  it("reads environment variables, and flags win over them", () => {
    const env = { GATEHOUSE_PORT: "9000", GATEHOUSE_HOST: "::1", GATEHOUSE_EXTERNAL_URL: "https://id.example.com/" };
    expect(loadConfig([], env)).toMatchObject({ port: 9000, host: "::1", externalUrl: "https://id.example.com" });
    expect(loadConfig(["--port", "9001", "--db-synchronous", "normal"], env)).toMatchObject({ port: 9001, dbSynchronous: "NORMAL" });
    expect(loadConfig([], { GATEHOUSE_HOST: "::1" }).externalUrl).toBe("http://[::1]:8080");
  });

  it("limits long-lived streams and idle connections by default, each settable by env and flag", () => {
    expect(loadConfig([], {})).toMatchObject({ idleTimeoutMs: 30_000, http2MaxConcurrentStreams: 100, maxStreamingCalls: 500, streamMaxLifetimeMs: 600_000 });
    const env = { GATEHOUSE_IDLE_TIMEOUT_MS: "1000", GATEHOUSE_HTTP2_MAX_CONCURRENT_STREAMS: "10", GATEHOUSE_MAX_STREAMING_CALLS: "20", GATEHOUSE_STREAM_MAX_LIFETIME_MS: "60000" };
    expect(loadConfig([], env)).toMatchObject({ idleTimeoutMs: 1000, http2MaxConcurrentStreams: 10, maxStreamingCalls: 20, streamMaxLifetimeMs: 60_000 });
    const flags = ["--idle-timeout-ms", "2000", "--http2-max-concurrent-streams", "11", "--max-streaming-calls", "21", "--stream-max-lifetime-ms", "70000"];
    expect(loadConfig(flags, env)).toMatchObject({ idleTimeoutMs: 2000, http2MaxConcurrentStreams: 11, maxStreamingCalls: 21, streamMaxLifetimeMs: 70_000 });
  });

  it("caps streaming calls per remote address below the server-wide cap, settable by env and flag", () => {
    expect(loadConfig([], {}).maxStreamingCallsPerPeer).toBe(50);
    expect(loadConfig([], {}).maxStreamingCallsPerPeer).toBeLessThan(loadConfig([], {}).maxStreamingCalls);
    const env = { GATEHOUSE_MAX_STREAMING_CALLS_PER_PEER: "7" };
    expect(loadConfig([], env).maxStreamingCallsPerPeer).toBe(7);
    expect(loadConfig(["--max-streaming-calls-per-peer", "8"], env).maxStreamingCallsPerPeer).toBe(8);
  });

  it.each([
    [[], { GATEHOUSE_HTTP2_MAX_CONCURRENT_STREAMS: "0" }, /GATEHOUSE_HTTP2_MAX_CONCURRENT_STREAMS/],
    [[], { GATEHOUSE_MAX_STREAMING_CALLS: "-1" }, /GATEHOUSE_MAX_STREAMING_CALLS/],
    [[], { GATEHOUSE_MAX_STREAMING_CALLS_PER_PEER: "0" }, /GATEHOUSE_MAX_STREAMING_CALLS_PER_PEER/],
    [[], { GATEHOUSE_IDLE_TIMEOUT_MS: "soon" }, /GATEHOUSE_IDLE_TIMEOUT_MS/],
    [[], { GATEHOUSE_STREAM_MAX_LIFETIME_MS: "10" }, /GATEHOUSE_STREAM_MAX_LIFETIME_MS/],
    [["--port", "65536"], {}, /--port|GATEHOUSE_PORT/],
    [["--port", "80a"], {}, /--port|GATEHOUSE_PORT/],
    [[], { GATEHOUSE_LOG_LEVEL: "loud" }, /GATEHOUSE_LOG_LEVEL/],
    [[], { GATEHOUSE_DB_SYNCHRONOUS: "sometimes" }, /GATEHOUSE_DB_SYNCHRONOUS/],
    [[], { GATEHOUSE_TLS_CERT: "/c.pem" }, /go together/],
    [[], { GATEHOUSE_EXTERNAL_URL: "not a url" }, /absolute URL/],
    [["--unknown-flag", "x"], {}, /unknown/i],
  ])("rejects %j %j with a clear message", (argv, env, message) => {
    expect(() => loadConfig(argv, env)).toThrow(ConfigError);
    expect(() => loadConfig(argv, env)).toThrow(message);
  });
});
