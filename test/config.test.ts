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

  it.each([
    [["--port", "65536"], {}, /GATEHOUSE_PORT/],
    [["--port", "80a"], {}, /GATEHOUSE_PORT/],
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
