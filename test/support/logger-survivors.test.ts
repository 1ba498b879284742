import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { accessLogOf, createLogger, isoTimeField } from "../../src/support/logger.js";

// Logs (src/support/logger.ts) are JSON lines that name the service, and fields that can carry secrets —
// authorization, password, token, secret, at the top or one level down — are written as "[redacted]", never as
// their value: a safety net for a log call that passes more than it should.

function capture(level = "info") {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString("utf8").split("\n").filter(Boolean)) lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return { logger: createLogger(level, stream), lines };
}

describe("log lines", () => {
  it("name the service", () => {
    const { logger, lines } = capture();
    logger.info("started");
    expect(lines[0]).toMatchObject({ service: "gatehouse", msg: "started" });
  });

  it("redact the fields that can carry secrets, at the top and one level down", () => {
    const { logger, lines } = capture();
    const secrets = { authorization: "Bearer tok-1", password: "pw-2", token: "tok-3", secret: "sec-4" };
    logger.info({ ...secrets, req: { ...secrets } }, "call");
    const line = lines[0]!;
    for (const field of Object.keys(secrets)) {
      expect(line[field]).toBe("[redacted]");
      expect((line.req as Record<string, unknown>)[field]).toBe("[redacted]");
    }
    for (const value of Object.values(secrets)) expect(JSON.stringify(line)).not.toContain(value);
  });

  it("the per-call access logger writes to the same place at the same level, and every other line stays redacted", () => {
    const { logger, lines } = capture("warn");
    const access = accessLogOf(logger);
    access.info({ requestId: "r-1" }, "rpc");
    access.warn({ requestId: "r-2" }, "rpc");
    logger.warn({ password: "pw-5" }, "other");
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatchObject({ service: "gatehouse", requestId: "r-2", msg: "rpc" });
    expect(lines[1]).toMatchObject({ password: "[redacted]", msg: "other" });
  });
});

describe("the time of a line", () => {
  it("is the ISO 8601 UTC date with milliseconds, as Date.toISOString writes it, across seconds, days and years", () => {
    const instants = [0, 5, 59, 999, 1000, 1001, Date.UTC(2026, 10, 26, 3, 59, 59, 999), Date.UTC(2026, 10, 26, 4, 0, 0, 7), Date.UTC(2026, 11, 31, 23, 59, 59, 990), Date.UTC(2027, 0, 1, 0, 0, 0, 10)];
    for (const now of [...instants, ...instants.reverse()]) expect(isoTimeField(now), String(now)).toBe(`,"time":"${new Date(now).toISOString()}"`);
  });

  it("is written on every line as that field", () => {
    const { logger, lines } = capture();
    const before = Date.now();
    logger.info("started");
    const time = Date.parse(String(lines[0]!.time));
    expect(time).toBeGreaterThanOrEqual(before);
    expect(time).toBeLessThanOrEqual(Date.now());
    expect(String(lines[0]!.time)).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
  });
});
