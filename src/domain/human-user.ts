/**
 * The initial-state rule of API.md. A user without IDP links starts INITIAL when the email is
 * unverified or it has no way to sign in yet (no password, imported hash or passwordless
 * registration), and then gets an initialization mail — with an email code when the email is
 * unverified and a set-password link when there is no password. A user with IDP links signs in
 * there: it starts ACTIVE and gets a verification mail only when its email is unverified.
 */
export interface InitialSetup {
  state: "active" | "initial";
  mail: "initialization" | "verification" | "none";
  emailCode: boolean;
  initCode: boolean;
}

export function initialSetup(input: { hasIdpLinks: boolean; emailVerified: boolean; hasPassword: boolean; passwordless: boolean }): InitialSetup {
  if (input.hasIdpLinks) {
    return { state: "active", mail: input.emailVerified ? "none" : "verification", emailCode: !input.emailVerified, initCode: false };
  }
  const initial = !input.emailVerified || (!input.hasPassword && !input.passwordless);
  if (!initial) return { state: "active", mail: "none", emailCode: false, initCode: false };
  return { state: "initial", mail: "initialization", emailCode: !input.emailVerified, initCode: !input.hasPassword };
}

/** The longest display name Profile.display_name allows, in characters (code points, as buf.validate counts). */
export const MAX_DISPLAY_NAME_CHARS = 200;

/**
 * The display name of a user who gave none: "first last", which can reach 401 characters from two
 * valid names, so it is cut to the limit at a code point boundary (never between the halves of a
 * surrogate pair) and trimmed, so the cut never leaves a trailing space. The names arrive trimmed and
 * non-empty (the validation interceptor trims them before their min_len rule).
 */
export function defaultDisplayName(firstName: string, lastName: string): string {
  const codePoints = Array.from(`${firstName} ${lastName}`);
  return codePoints.slice(0, MAX_DISPLAY_NAME_CHARS).join("").trim();
}
