import { createHash, randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { checkCode, codeDigest, generateCode, MAX_CODE_ATTEMPTS, type StoredCode } from "../../src/domain/codes.js";
import { normalizeEmail, normalizePhone } from "../../src/domain/contact.js";
import { DomainError } from "../../src/domain/errors.js";
import { checkPasswordPolicy, DEFAULT_PASSWORD_POLICY } from "../../src/domain/password-policy.js";
import { normalizeTotpSecret } from "../../src/domain/totp-secret.js";

function failureOf(fn: () => unknown): DomainError {
  try {
    fn();
  } catch (error) {
    if (error instanceof DomainError) return error;
    throw error;
  }
  throw new Error("did not throw");
}

describe("password policy (default: 8+ characters, upper, lower, digit, symbol)", () => {
  it("accepts a password meeting every rule", () => {
    expect(() => checkPasswordPolicy(DEFAULT_PASSWORD_POLICY, "Aa1!aaaa")).not.toThrow();
  });

  it("names every broken rule", () => {
    const error = failureOf(() => checkPasswordPolicy(DEFAULT_PASSWORD_POLICY, "abc"));
    expect(error.reason).toBe("password.policy");
    expect(error.violations.map((v) => v.rule)).toEqual(["password.policy.min_length", "password.policy.uppercase", "password.policy.digit", "password.policy.symbol"]);
    expect(error.violations.every((v) => v.field === "password")).toBe(true);
  });

  it("counts characters, not UTF-16 units, and knows non-ASCII letters", () => {
    expect(() => checkPasswordPolicy(DEFAULT_PASSWORD_POLICY, "Ää1!ää😀")).toThrow(); // 7 characters
    expect(() => checkPasswordPolicy(DEFAULT_PASSWORD_POLICY, "Ää1!ää😀x")).not.toThrow();
  });
});

describe("email", () => {
  it.each(["ada@example.com", "  ada@example.com  ", "a.b+tag@sub.example.co.uk", "ünï@bücher.de"])("accepts %j", (email) => {
    expect(normalizeEmail(email)).toBe(email.trim());
  });
  it.each(["", "ada", "ada@", "@example.com", "ada@example", "a da@example.com", "ada@@example.com", "ada@exa mple.com", ".ada@example.com", "ada..b@example.com", "ada@-example.com"])(
    "rejects %j",
    (email) => {
      expect(failureOf(() => normalizeEmail(email))).toMatchObject({ reason: "email.invalid", violations: [{ field: "email.email" }] });
    },
  );
});

describe("phone", () => {
  it.each([
    ["+41 44 668 18 00", "+41446681800"],
    ["+1-415-555-2671", "+14155552671"],
    ["+49 (0)30 901820", "+4930901820"],
  ])("normalizes %j to E.164", (raw, e164) => {
    expect(normalizePhone(raw)).toBe(e164);
  });
  it.each(["044 668 18 00", "0041446681800", "+41 12", "+999 123 456 789", "+1 555", "call me"])("rejects %j", (raw) => {
    expect(failureOf(() => normalizePhone(raw))).toMatchObject({ reason: "phone.invalid", violations: [{ field: "phone.phone" }] });
  });
});

describe("TOTP secret", () => {
  it("normalizes case, spaces and padding", () => {
    expect(normalizeTotpSecret("jbsw y3dp ehpk 3pxp====")).toBe("JBSWY3DPEHPK3PXP");
  });
  it.each(["JBSWY3DPEHPK3PX", "JBSWY3DPEHPK3PX1", "not base32!!!!!!!"])("rejects %j", (secret) => {
    expect(failureOf(() => normalizeTotpSecret(secret)).reason).toBe("otp.invalid");
  });
});

describe("one-time codes", () => {
  const key = randomBytes(32);
  const now = new Date("2026-01-01T00:00:00Z");
  const stored = (code: string, over: Partial<StoredCode> = {}): StoredCode => ({
    id: "c1",
    kind: "email",
    digest: codeDigest(key, "email", "c1", code),
    expiresAt: now.getTime() + 3_600_000,
    attempts: 0,
    usedAt: null,
    ...over,
  });

  it("generates codes of the kind's length from upper-case letters and digits, all different", () => {
    const codes = new Set(Array.from({ length: 200 }, () => generateCode("email")));
    expect(codes.size).toBe(200);
    for (const code of codes) expect(code).toMatch(/^[A-Z0-9]{6}$/);
    expect(generateCode("passwordless")).toMatch(/^[A-Z0-9]{12}$/);
  });

  it("stores a keyed digest bound to kind and id, never the code", () => {
    const digest = codeDigest(key, "email", "c1", "ABC123");
    // A 64-hex HMAC-SHA256, and not a plain (unkeyed) hash anyone could compute from a guessed code.
    expect(digest).toMatch(/^[0-9a-f]{64}$/);
    for (const unkeyed of ["ABC123", "email:c1:ABC123"]) expect(digest).not.toBe(createHash("sha256").update(unkeyed).digest("hex"));
    expect(codeDigest(key, "email", "c2", "ABC123")).not.toBe(digest);
    expect(codeDigest(key, "init", "c1", "ABC123")).not.toBe(digest);
    expect(codeDigest(randomBytes(32), "email", "c1", "ABC123")).not.toBe(digest);
  });

  it("judges attempts: right, wrong, used, expired (injected time), exhausted", () => {
    expect(checkCode(key, stored("ABC123"), " abc123 ", now)).toBe("ok");
    expect(checkCode(key, stored("ABC123"), "ABC124", now)).toBe("invalid");
    expect(checkCode(key, stored("ABC123", { usedAt: 1 }), "ABC123", now)).toBe("used");
    expect(checkCode(key, stored("ABC123"), "ABC123", new Date(now.getTime() + 3_600_000))).toBe("expired");
    expect(checkCode(key, stored("ABC123", { attempts: MAX_CODE_ATTEMPTS - 1 }), "ABC123", now)).toBe("ok");
    expect(checkCode(key, stored("ABC123", { attempts: MAX_CODE_ATTEMPTS }), "ABC123", now)).toBe("exhausted");
  });
});
