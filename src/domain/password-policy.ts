import { type FieldViolation, invalidArgument } from "./errors.js";

/** The instance's password complexity policy; stored as data (one row per instance). */
export interface PasswordPolicy {
  minLength: number;
  requireUppercase: boolean;
  requireLowercase: boolean;
  requireDigit: boolean;
  requireSymbol: boolean;
}

export const DEFAULT_PASSWORD_POLICY: PasswordPolicy = {
  minLength: 8,
  requireUppercase: true,
  requireLowercase: true,
  requireDigit: true,
  requireSymbol: true,
};

/** Checks a password, naming every rule it breaks (`password.policy.min_length`, …), not only the first. */
export function checkPasswordPolicy(policy: PasswordPolicy, password: string, field = "password"): void {
  const broken: [string, string][] = [];
  if ([...password].length < policy.minLength) broken.push(["min_length", `must be at least ${policy.minLength} characters`]);
  if (policy.requireUppercase && !/\p{Lu}/u.test(password)) broken.push(["uppercase", "must contain an upper-case letter"]);
  if (policy.requireLowercase && !/\p{Ll}/u.test(password)) broken.push(["lowercase", "must contain a lower-case letter"]);
  if (policy.requireDigit && !/\p{Nd}/u.test(password)) broken.push(["digit", "must contain a digit"]);
  if (policy.requireSymbol && !/[^\p{L}\p{N}]/u.test(password)) broken.push(["symbol", "must contain a symbol"]);
  if (broken.length === 0) return;
  const violations: FieldViolation[] = broken.map(([rule, description]) => ({ field, description, rule: `password.policy.${rule}` }));
  throw invalidArgument("password.policy", "the password does not meet the password policy", violations, { rules: broken.map(([rule]) => rule).join(",") });
}
