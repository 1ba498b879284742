import { invalidArgument } from "./errors.js";

/**
 * Normalizes an imported TOTP secret: RFC 4648 base32 (case, spaces and padding ignored), at least
 * 80 bits as RFC 4226 requires (16 characters) and at most 512 bits.
 */
export function normalizeTotpSecret(raw: string, field = "otp_code"): string {
  const secret = raw.replace(/[\s=]/g, "").toUpperCase();
  let problem: string | undefined;
  if (!/^[A-Z2-7]+$/.test(secret)) problem = "must be base32 (A–Z, 2–7)";
  else if (secret.length < 16) problem = "must be at least 16 base32 characters (80 bits)";
  else if (secret.length > 103) problem = "must be at most 103 base32 characters (512 bits)";
  if (problem) throw invalidArgument("otp.invalid", `otp_code ${problem}`, [{ field, description: problem, rule: "otp.invalid" }]);
  return secret;
}
