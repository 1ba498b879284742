import { isIP } from "node:net";
import { type FieldViolation, invalidArgument } from "./errors.js";

/** localhost, 127.0.0.0/8 and ::1: where plain http cannot be intercepted on the network. */
export function isLoopbackHost(hostname: string): boolean {
  // Stryker disable next-line Regex: URL host names carry brackets only around an IPv6 address, never inside it
  const host = hostname.replace(/^\[|\]$/g, "").toLowerCase();
  if (host === "localhost" || host.endsWith(".localhost")) return true;
  if (isIP(host) === 4) return host.startsWith("127.");
  return host === "::1";
}

/** Schemes that run code or read local data in a browser: never a redirect target. */
const DANGEROUS_SCHEMES = new Set(["javascript:", "data:", "vbscript:", "file:", "blob:"]);

/** Schemes whose URLs always name a host (the URL parser refuses them without one). */
const HOST_SCHEMES = new Set(["https:", "http:"]);

/**
 * Why a redirect URI is unacceptable, or undefined when it is fine: it must be absolute, carry no
 * fragment (OAuth 2.0 §3.1.2), use https, http only on a loopback host, or a private-use scheme
 * of a native app (RFC 8252 §7.1, e.g. `com.example.app:/callback`).
 */
export function redirectUriProblem(uri: string): string | undefined {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return "must be an absolute URI";
  }
  if (url.hash || uri.includes("#")) return "must not contain a fragment";
  if (DANGEROUS_SCHEMES.has(url.protocol)) return `the scheme ${url.protocol} is not allowed`;
  if (url.protocol === "http:" && !isLoopbackHost(url.hostname)) return "plain http is allowed only for loopback hosts";
  // Stryker disable next-line ConditionalExpression,StringLiteral: a defence the URL parser makes unreachable, as it refuses http(s) URLs without a host
  if (HOST_SCHEMES.has(url.protocol) && !url.hostname) return "must name a host";
  return undefined;
}

/** Checks redirect URIs, one field violation per bad one. */
export function checkRedirectUris(uris: string[], field = "redirect_uris"): void {
  const violations: FieldViolation[] = uris.flatMap((uri, index) => {
    const problem = redirectUriProblem(uri);
    return problem ? [{ field: `${field}[${index}]`, description: problem, rule: "application.redirect_uri_invalid" }] : [];
  });
  if (violations.length > 0) throw invalidArgument("application.redirect_uri_invalid", "invalid redirect URIs", violations);
}

/** An https URL (http only on loopback) without credentials or fragment, e.g. an OIDC issuer. */
export function checkHttpsUrl(value: string, field: string, reason: string): void {
  let problem: string | undefined;
  try {
    const url = new URL(value);
    if (url.protocol !== "https:" && !(url.protocol === "http:" && isLoopbackHost(url.hostname))) problem = "must use https (http only for loopback hosts)";
    else if (url.username || url.password) problem = "must not contain credentials";
    else if (url.hash) problem = "must not contain a fragment";
  } catch {
    problem = "must be an absolute URL";
  }
  if (problem) throw invalidArgument(reason, `${field} ${problem}`, [{ field, description: problem, rule: reason }]);
}
