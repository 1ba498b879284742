/**
 * The Content-Security-Policy of every page: nothing may load but the served stylesheet, no script at all (the pages
 * need none), forms post only back to Gatehouse, no other site may frame a page (clickjacking a form that sets a
 * password), and no <base> can redirect the pages' relative URLs.
 */
export const CONTENT_SECURITY_POLICY = "default-src 'none'; style-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/**
 * The headers of every answer under /ui/login/. The page's URL holds a code (the credential of the link), so the
 * referrer goes nowhere, not even to Gatehouse's own stylesheet; nothing is stored by a browser or a proxy on the way.
 */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  "content-security-policy": CONTENT_SECURITY_POLICY,
  "x-frame-options": "DENY",
  "referrer-policy": "no-referrer",
  "cache-control": "no-store",
  "x-content-type-options": "nosniff",
  "cross-origin-opener-policy": "same-origin",
  "cross-origin-resource-policy": "same-origin",
};
