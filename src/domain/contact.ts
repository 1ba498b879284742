import { parsePhoneNumberWithError } from "libphonenumber-js/max";
import { DomainError, invalidArgument } from "./errors.js";

/**
 * Trims an email address and checks its syntax: one "@", a local part without spaces or control
 * characters, and a domain of dot-separated labels with a top-level part. Returns the trimmed address.
 */
export function normalizeEmail(raw: string, field = "email.email"): string {
  const email = raw.trim();
  const at = email.lastIndexOf("@");
  const local = email.slice(0, at);
  const domain = email.slice(at + 1);
  const label = /^(?!-)[\p{L}\p{N}-]{1,63}(?<!-)$/u;
  const valid =
    at > 0 &&
    local.length <= 64 &&
    !/[\s\p{Cc}@]/u.test(local) &&
    !local.startsWith(".") &&
    !local.endsWith(".") &&
    !local.includes("..") &&
    domain.length <= 253 &&
    domain.split(".").length >= 2 &&
    domain.split(".").every((part) => label.test(part));
  if (!valid) throw invalidArgument("email.invalid", `"${email}" is not a valid email address`, [{ field, description: "is not a valid email address", rule: "email.invalid" }]);
  return email;
}

/** The key under which email addresses are compared (filters): case-insensitive. */
export const emailKey = (email: string) => email.toLowerCase();

/**
 * Parses a mobile number given in the global form of RFC 3966 (starting with "+", spaces and
 * dashes allowed) and returns it as E.164. National numbers and impossible numbers are rejected.
 */
export function normalizePhone(raw: string, field = "phone.phone"): string {
  const fail = (description: string) => invalidArgument("phone.invalid", `phone ${description}`, [{ field, description, rule: "phone.invalid" }]);
  const phone = raw.trim();
  if (!phone.startsWith("+")) throw fail("must start with + and the country code");
  try {
    const parsed = parsePhoneNumberWithError(phone);
    if (!parsed.isValid()) throw fail("is not a valid number");
    return parsed.number;
  } catch (error) {
    // Stryker disable next-line ConditionalExpression: the only DomainError the try throws is the same "is not a valid number" failure built below
    if (error instanceof DomainError) throw error;
    throw fail("is not a valid number");
  }
}
