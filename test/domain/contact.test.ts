import { describe, expect, it } from "vitest";
import { emailKey, normalizeEmail, normalizePhone } from "../../src/domain/contact.js";
import { DomainError } from "../../src/domain/errors.js";
import { thrownBy } from "../support/thrown.js";

/** API.md "Create user": the email is trimmed and its syntax checked; the phone starts with "+" and is stored as E.164. */
const refusal = (action: () => unknown): DomainError => thrownBy(DomainError, action);

const label63 = "a".repeat(63);

describe("email addresses", () => {
  it.each([
    ["a local part of 64 characters", `${"a".repeat(64)}@example.com`],
    ["a domain label of 63 characters", `ada@${label63}.com`],
    ["a domain of 253 characters", `ada@${label63}.${label63}.${label63}.${"a".repeat(57)}.com`],
    ["hyphens inside a label", "ada@ex-am-ple.co"],
    ["digits-only labels", "ada@123.456"],
  ])("accepts %s", (_name, email) => {
    expect(normalizeEmail(email)).toBe(email);
  });

  it.each([
    ["a local part of 65 characters", `${"a".repeat(65)}@example.com`],
    ["a domain label of 64 characters", `ada@${"a".repeat(64)}.com`],
    ["a domain of 254 characters", `ada@${label63}.${label63}.${label63}.${"a".repeat(58)}.com`],
    ["a local part ending in a dot", "ada.@example.com"],
    ["a control character in the local part", "a\u0001da@example.com"],
    ["a tab in the local part", "a\tda@example.com"],
    ["a label ending in a hyphen", "ada@example-.com"],
    ["an empty label", "ada@example..com"],
    ["a trailing dot", "ada@example.com."],
    ["an underscore in the domain", "ada@ex_ample.com"],
  ])("refuses %s as invalid_argument with a field violation", (_name, email) => {
    const error = refusal(() => normalizeEmail(email));
    expect(error).toMatchObject({ kind: "invalid_argument", reason: "email.invalid" });
    expect(error.violations).toEqual([{ field: "email.email", rule: "email.invalid", description: expect.stringMatching(/valid email/) }]);
    expect(error.message).toMatch(/valid email/);
  });

  it("names the field the address came from", () => {
    expect(refusal(() => normalizeEmail("nope", "users[3].email")).violations[0]!.field).toBe("users[3].email");
  });

  it("compares addresses case-insensitively", () => {
    expect(emailKey("Ada.Lovelace@Example.COM")).toBe(emailKey("ada.lovelace@example.com"));
    expect(emailKey("ada@example.com")).not.toBe(emailKey("bob@example.com"));
  });
});

describe("phone numbers", () => {
  it("trims surrounding white space before parsing", () => {
    expect(normalizePhone("  +41 44 668 18 00\t")).toBe("+41446681800");
  });

  it.each([
    ["a national number", "044 668 18 00"],
    ["an RFC 3966 URI, which is not the global number itself", "tel:+41446681800"],
  ])("refuses %s: it must start with + and the country code", (_name, raw) => {
    const error = refusal(() => normalizePhone(raw));
    expect(error).toMatchObject({ kind: "invalid_argument", reason: "phone.invalid" });
    expect(error.violations).toEqual([{ field: "phone.phone", rule: "phone.invalid", description: expect.stringContaining("+") }]);
    expect(error.message).toContain(error.violations[0]!.description);
  });

  it.each([
    ["too short for its country", "+41 12"],
    ["of no country", "+999 123 456 789"],
    ["too long for its country", "+41 44 668 18 00 00 00"],
  ])("refuses a number %s, saying it is not a valid number", (_name, raw) => {
    const error = refusal(() => normalizePhone(raw, "phone"));
    expect(error).toMatchObject({ kind: "invalid_argument", reason: "phone.invalid" });
    expect(error.violations).toEqual([{ field: "phone", rule: "phone.invalid", description: expect.stringMatching(/valid number/) }]);
    expect(error.message).toMatch(/valid number/);
  });
});
