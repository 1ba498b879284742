import { describe, expect, it } from "vitest";
import { DomainError } from "../../src/domain/errors.js";
import { defaultDisplayName, initialSetup, MAX_DISPLAY_NAME_CHARS } from "../../src/domain/human-user.js";
import { checkUserName, uniquenessKey } from "../../src/domain/names.js";
import { checkPasswordPolicy, DEFAULT_PASSWORD_POLICY, type PasswordPolicy } from "../../src/domain/password-policy.js";
import { normalizeTotpSecret } from "../../src/domain/totp-secret.js";
import { thrownBy } from "../support/thrown.js";

const refusal = (action: () => unknown): DomainError => thrownBy(DomainError, action);

describe("initial state of a new human user (API.md, Create user)", () => {
  const setup = (hasIdpLinks: boolean, emailVerified: boolean, hasPassword: boolean, passwordless = false) =>
    initialSetup({ hasIdpLinks, emailVerified, hasPassword, passwordless });

  it("a user with IDP links starts active, gets a verification mail only for an unverified email, and never a set-password code", () => {
    expect(setup(true, true, false)).toEqual({ state: "active", mail: "none", emailCode: false, initCode: false });
    expect(setup(true, false, false)).toEqual({ state: "active", mail: "verification", emailCode: true, initCode: false });
    expect(setup(true, false, true)).toEqual({ state: "active", mail: "verification", emailCode: true, initCode: false });
  });

  it("a user with a verified email and a way to sign in (password or passwordless) starts active without mail", () => {
    expect(setup(false, true, true)).toEqual({ state: "active", mail: "none", emailCode: false, initCode: false });
    expect(setup(false, true, false, true)).toEqual({ state: "active", mail: "none", emailCode: false, initCode: false });
  });

  it("otherwise it starts initial with an initialization mail: an email code when unverified, a set-password code without password", () => {
    expect(setup(false, true, false)).toEqual({ state: "initial", mail: "initialization", emailCode: false, initCode: true });
    expect(setup(false, false, true)).toEqual({ state: "initial", mail: "initialization", emailCode: true, initCode: false });
    expect(setup(false, false, false)).toEqual({ state: "initial", mail: "initialization", emailCode: true, initCode: true });
    expect(setup(false, false, false, true)).toEqual({ state: "initial", mail: "initialization", emailCode: true, initCode: true });
  });
});

describe("default display name", () => {
  it("is first and last name, cut to the display name limit in characters without a trailing space", () => {
    expect(defaultDisplayName("Ada", "Lovelace")).toBe("Ada Lovelace");
    expect(MAX_DISPLAY_NAME_CHARS).toBe(200);
    expect(defaultDisplayName("a".repeat(200), "b".repeat(200))).toBe("a".repeat(200));
    expect(defaultDisplayName("a".repeat(198), "bcd")).toBe(`${"a".repeat(198)} b`);
    // The cut falls right after the space between the names, which is then trimmed.
    expect(defaultDisplayName("a".repeat(199), "bcd")).toBe("a".repeat(199));
    // Surrogate pairs count as one character and are never split.
    expect(Array.from(defaultDisplayName("😀".repeat(150), "😀".repeat(150)))).toHaveLength(200);
    expect(defaultDisplayName("😀".repeat(150), "😀".repeat(150))).not.toMatch(/[\ud800-\udbff]$/);
  });
});

describe("user names", () => {
  it.each(["ada", "ada.lovelace@example.com", "Ädä_1-2"])("accepts %j", (name) => {
    expect(() => checkUserName(name)).not.toThrow();
  });

  it.each(["ada lovelace", "ada\tl", "ada\u00a0l", "ada\u3000l", "ada\u0007"])("refuses %j: no white space or control characters", (name) => {
    const error = refusal(() => checkUserName(name, "users[0].user_name"));
    expect(error).toMatchObject({ kind: "invalid_argument", reason: "user.name_invalid" });
    expect(error.violations).toEqual([{ field: "users[0].user_name", rule: "user.name_invalid", description: expect.stringMatching(/white space/) }]);
    expect(error.message).toMatch(/white space/);
    expect(refusal(() => checkUserName(name)).violations[0]!.field).toBe("user_name");
  });

  it("are unique regardless of case and Unicode composition", () => {
    expect(uniquenessKey("ALICE")).toBe(uniquenessKey("alice"));
    expect(uniquenessKey("Alice\u0301")).toBe(uniquenessKey("Alicé"));
    expect(uniquenessKey("Ａｌｉｃｅ")).toBe(uniquenessKey("alice"));
    expect(uniquenessKey("alice")).not.toBe(uniquenessKey("alicia"));
  });
});

describe("password policy, rule by rule", () => {
  const none: PasswordPolicy = { minLength: 0, requireUppercase: false, requireLowercase: false, requireDigit: false, requireSymbol: false };
  const brokenRules = (policy: PasswordPolicy, password: string) => {
    const error = refusal(() => checkPasswordPolicy(policy, password, "new_password"));
    expect(error).toMatchObject({ kind: "invalid_argument", reason: "password.policy" });
    expect(error.message).not.toBe("");
    for (const violation of error.violations) {
      expect(violation.field).toBe("new_password");
      expect(violation.description).toMatch(/must/);
    }
    const rules = error.violations.map((v) => v.rule!.replace("password.policy.", ""));
    expect(error.metadata["rules"]).toBe(rules.join(","));
    return rules;
  };

  it.each([
    ["min_length", { minLength: 12 }, "Aa1!aaaaaaa", "Aa1!aaaaaaaa"],
    ["uppercase", { requireUppercase: true }, "abc", "abÇ"],
    ["lowercase", { requireLowercase: true }, "ABC1!", "ABç"],
    ["digit", { requireDigit: true }, "abc", "ab٣"],
    ["symbol", { requireSymbol: true }, "abc123", "abc 123"],
  ] as const)("%s: refused alone when broken, accepted when met", (rule, switchedOn, breaking, meeting) => {
    const policy = { ...none, ...switchedOn };
    expect(brokenRules(policy, breaking)).toEqual([rule]);
    expect(() => checkPasswordPolicy(policy, meeting)).not.toThrow();
    expect(() => checkPasswordPolicy(none, breaking)).not.toThrow();
  });

  it("names every broken rule of the default policy in order", () => {
    expect(brokenRules(DEFAULT_PASSWORD_POLICY, "")).toEqual(["min_length", "uppercase", "lowercase", "digit", "symbol"]);
    expect(brokenRules(DEFAULT_PASSWORD_POLICY, "ABCDEFG1!")).toEqual(["lowercase"]);
  });

  it("states the minimum length in its description", () => {
    const error = refusal(() => checkPasswordPolicy({ ...none, minLength: 12 }, "short"));
    expect(error.violations[0]!.description).toContain("12");
  });
});

describe("imported TOTP secret", () => {
  const problem = (raw: string) => {
    const error = refusal(() => normalizeTotpSecret(raw, "users[1].otp_code"));
    expect(error).toMatchObject({ kind: "invalid_argument", reason: "otp.invalid" });
    expect(error.violations).toEqual([{ field: "users[1].otp_code", rule: "otp.invalid", description: expect.any(String) }]);
    expect(error.message).toContain(error.violations[0]!.description);
    return error.violations[0]!.description;
  };

  it("takes 16 to 103 base32 characters (80 to 512 bits)", () => {
    expect(normalizeTotpSecret("A".repeat(16))).toBe("A".repeat(16));
    expect(normalizeTotpSecret("a".repeat(103))).toBe("A".repeat(103));
    expect(problem("A".repeat(15))).toMatch(/at least 16/);
    expect(problem("A".repeat(104))).toMatch(/at most 103/);
  });

  it("accepts only the base32 alphabet A–Z and 2–7", () => {
    expect(normalizeTotpSecret("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")).toBe("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567");
    for (const digit of ["0", "1", "8", "9"]) expect(problem(`${"A".repeat(16)}${digit}`)).toMatch(/base32/);
    expect(problem(`1${"A".repeat(16)}`)).toMatch(/base32/);
    expect(problem("")).toMatch(/base32/);
  });

  it("reports problems in the otp_code field by default", () => {
    expect(refusal(() => normalizeTotpSecret("AAA")).violations[0]!.field).toBe("otp_code");
  });
});
