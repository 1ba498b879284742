import { describe, expect, it } from "vitest";
import { DomainError } from "../../src/domain/errors.js";
import { dropsPassword, parseSmtpHost, sameSettings, type SmtpSettings, smtpPasswordContext } from "../../src/domain/smtp.js";

/** API.md "SMTP": host is `name:port` or `[ipv6]:port` with a port 1–65535; credentials never follow a config elsewhere. */
function hostProblem(host: string): string {
  try {
    parseSmtpHost(host);
  } catch (error) {
    if (!(error instanceof DomainError)) throw error;
    expect(error).toMatchObject({ kind: "invalid_argument", reason: "smtp.host_invalid" });
    expect(error.violations).toEqual([{ field: "host", rule: "smtp.host_invalid", description: expect.any(String) }]);
    const description = error.violations[0]!.description;
    expect(error.message).toContain(description);
    return description;
  }
  return expect.fail(`accepted ${host}`);
}

const label63 = "a".repeat(63);

describe("SMTP host", () => {
  it.each([
    ["smtp.example.com:587", "smtp.example.com", 587],
    ["mail:25", "mail", 25],
    ["10.0.0.1:465", "10.0.0.1", 465],
    ["[::1]:1", "::1", 1],
    ["[2001:db8::25]:65535", "2001:db8::25", 65535],
    [`${label63}.example.com:25`, `${label63}.example.com`, 25],
    [`${label63}.${label63}.${label63}.${"b".repeat(61)}:25`, `${label63}.${label63}.${label63}.${"b".repeat(61)}`, 25],
  ])("reads %s", (host, hostname, port) => {
    expect(parseSmtpHost(host)).toEqual({ hostname, port });
  });

  it.each(["smtp.example.com", "smtp.example.com:", ":25", "[]:25", "::1:25", "smtp.example.com:587:1", "smtp.example.com:123456"])("refuses %j: name:port or [ipv6]:port", (host) => {
    expect(hostProblem(host)).toMatch(/name:port/);
  });

  it("a bracketed host must be an IPv6 address", () => {
    expect(hostProblem("[127.0.0.1]:25")).toMatch(/IPv6/);
    expect(hostProblem("[smtp.example.com]:25")).toMatch(/IPv6/);
  });

  it.each([
    ["an underscore", "smtp_relay.example.com:25"],
    ["a leading hyphen", "-smtp.example.com:25"],
    ["a trailing hyphen", "smtp-.example.com:25"],
    ["an empty label", "smtp..example.com:25"],
    ["a label of 64 characters", `${"a".repeat(64)}.example.com:25`],
    ["more than 253 characters", `${label63}.${label63}.${label63}.${"b".repeat(62)}:25`],
  ])("refuses a name with %s", (_name, host) => {
    expect(hostProblem(host)).toMatch(/host name/);
  });

  it.each(["smtp.example.com:0", "smtp.example.com:65536", "[::1]:99999"])("refuses the port of %s", (host) => {
    expect(hostProblem(host)).toMatch(/port must be from 1 to 65535/);
  });
});

describe("SMTP password", () => {
  const current: SmtpSettings = { senderAddress: "gatehouse@example.com", senderName: "Gatehouse", tls: true, host: "smtp.example.com:587", user: "mailer" };

  it("is dropped when host or user changes, or required TLS is turned off", () => {
    expect(dropsPassword(current, { ...current, host: "smtp.other.example:587" })).toBe(true);
    expect(dropsPassword(current, { ...current, user: "someone-else" })).toBe(true);
    expect(dropsPassword(current, { ...current, tls: false })).toBe(true);
  });

  it("is kept when only sender details change or TLS is turned on", () => {
    expect(dropsPassword(current, { ...current, senderAddress: "noreply@example.com", senderName: "Noreply" })).toBe(false);
    expect(dropsPassword({ ...current, tls: false }, current)).toBe(false);
    expect(dropsPassword({ ...current, tls: false }, { ...current, tls: false })).toBe(false);
  });

  it("is sealed for its own instance only", () => {
    expect(smtpPasswordContext("instance-1")).not.toBe(smtpPasswordContext("instance-2"));
    expect(smtpPasswordContext("instance-1")).toBe(smtpPasswordContext("instance-1"));
  });
});

describe("unchanged SMTP settings", () => {
  const settings: SmtpSettings = { senderAddress: "a@example.com", senderName: "A", tls: false, host: "smtp.example.com:25", user: "" };

  it("are the same only when every field is", () => {
    expect(sameSettings(settings, { ...settings })).toBe(true);
    for (const change of [{ senderAddress: "b@example.com" }, { senderName: "B" }, { tls: true }, { host: "smtp.example.com:26" }, { user: "u" }]) {
      expect(sameSettings(settings, { ...settings, ...change })).toBe(false);
    }
  });
});
