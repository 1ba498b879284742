/**
 * Scrubbing of what an SMTP relay (or nodemailer, quoting it) says. Some relays echo the login
 * exchange in their replies ("535 auth failed for \0user\0secret", "AUTH PLAIN AG1haWxlcgBzZWNyZXQ=
 * rejected"); those words end up in events, logs and TestSmtpConfig answers, so every text that
 * leaves the SMTP client passes through {@link scrubRelayText} first.
 */

export const REDACTED = "[redacted]";

/** A run of base64 (standard or URL-safe alphabet) characters, with its padding. */
const BASE64_TOKEN = /[A-Za-z0-9+/_-]+={0,2}/g;
/** SASL mechanisms by name, so that prose such as "auth failed for" is not taken for a command. */
const MECHANISM = String.raw`(?:PLAIN|LOGIN|XOAUTH2?|OAUTHBEARER|CRAM-MD5|DIGEST-MD5|SCRAM-[A-Z0-9-]+|NTLM|GSSAPI|EXTERNAL)`;
/** `AUTH <mechanism> <initial response>`: the argument is credentials whatever it decodes to. */
const AUTH_ARGUMENT = new RegExp(String.raw`\b(AUTH[ \t]+${MECHANISM}[ \t]+)(?!\[redacted\])[^\s]+`, "gi");
/** A line after which the client's next line is a SASL response: a bare `AUTH <mechanism>` or a 334 challenge. */
const SASL_PROMPT = new RegExp(String.raw`^\s*(?:\d{3}[ -](?:\d\.\d{1,3}\.\d{1,3}\s+)?)?(?:AUTH[ \t]+${MECHANISM}\s*|334(?:[ -].*)?)$`, "i");
const SASL_RESPONSE = /^\s*[A-Za-z0-9+/=_-]+\s*$/;

/**
 * The text with the SMTP password removed in every form a relay is known to echo: plain (any
 * letter case), base64 on its own or inside a longer base64 token such as an AUTH PLAIN blob
 * (`\0user\0password`) at any byte alignment and character offset, URL-safe base64, and SASL responses
 * of an echoed AUTH exchange. Each is replaced by `[redacted]`. Without a password, only the
 * echoed AUTH arguments and SASL responses are removed. Pure; safe to apply twice.
 */
export function scrubRelayText(text: string, password: string | undefined): string {
  let out = redactSaslResponses(text);
  if (password) {
    // Stryker disable next-line StringLiteral: utf8 is Buffer.from's default encoding, so an empty encoding name means the same
    const secret = Buffer.from(password, "utf8");
    out = outsideMarkers(out, (part) => part.replace(BASE64_TOKEN, (token) => (carriesSecret(token, secret) ? REDACTED : token)));
    const plain = new RegExp(escapeRegExp(password), "giu");
    out = outsideMarkers(out, (part) => part.replace(plain, REDACTED));
  }
  return out;
}

/** Applies `scrub` to the text between markers, so a marker is never taken apart by a later pass. */
function outsideMarkers(text: string, scrub: (part: string) => string): string {
  return text
    .split(REDACTED)
    .map((part) => scrub(part))
    .join(REDACTED);
}

/** The argument of `AUTH PLAIN xxx` / `AUTH LOGIN xxx`, and a bare base64 line answering an AUTH prompt. */
function redactSaslResponses(text: string): string {
  const lines = text.split(/(\r?\n)/);
  // Stryker disable next-line EqualityOperator: a split with a captured separator has an odd number of parts, so the even i never equals lines.length
  for (let i = 0; i < lines.length; i += 2) {
    lines[i] = lines[i]!.replace(AUTH_ARGUMENT, `$1${REDACTED}`);
    const previous = lines[i - 2];
    // Stryker disable next-line ConditionalExpression: the first line has none before it, and RegExp.test(undefined) tests the word "undefined", which is no AUTH prompt
    if (previous === undefined) continue;
    if (SASL_PROMPT.test(previous) && SASL_RESPONSE.test(lines[i]!)) lines[i] = REDACTED;
  }
  return lines.join("");
}

/**
 * Does a base64-looking token encode the secret, whole or inside longer data (an AUTH PLAIN blob)?
 * Base64 maps every 4 characters to 3 bytes, so decoding from each of the first four character
 * offsets puts any encoding embedded in the token on a group boundary: the secret's bytes then come
 * out exactly, whatever their alignment in the encoded data and whatever is glued before or after.
 */
function carriesSecret(token: string, secret: Buffer): boolean {
  // Stryker disable next-line Regex,StringLiteral: BASE64_TOKEN puts "=" only at a token's end, and whatever is left there or put in its place changes none of the bytes decoded before it
  const unpadded = token.replace(/=+$/, "");
  return [0, 1, 2, 3].some((offset) => Buffer.from(unpadded.slice(offset), "base64").includes(secret));
}

const escapeRegExp = (value: string) => value.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
