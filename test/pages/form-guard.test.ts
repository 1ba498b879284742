import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { checkFormToken, formToken, isSameOriginPost } from "../../src/pages/form-guard.js";
import { escapeHtml, html, renderPage } from "../../src/pages/html.js";

const ORIGIN = "https://iam.example.com";

describe("which posts count as Gatehouse's own (fetch metadata and Origin)", () => {
  it.each([
    ["a browser's post from the page (Origin null under no-referrer)", { origin: "null", "sec-fetch-site": "same-origin" }, true],
    ["the page's origin", { origin: ORIGIN, "sec-fetch-site": "same-origin" }, true],
    ["the page's origin, without fetch metadata", { origin: ORIGIN }, true],
    ["no browser headers at all (left to the form token)", {}, true],
    ["another site", { origin: "https://evil.example", "sec-fetch-site": "cross-site" }, false],
    ["a sibling subdomain", { origin: "https://evil.example.com", "sec-fetch-site": "same-site" }, false],
    ["a user's own navigation to a POST (none)", { "sec-fetch-site": "none" }, false],
    ["another origin claiming same-origin", { origin: "https://evil.example", "sec-fetch-site": "same-origin" }, false],
    ["Origin null alone", { origin: "null" }, false],
    ["the origin over plain http", { origin: "http://iam.example.com" }, false],
  ] as const)("%s: %s", (_what, headers, allowed) => {
    expect(isSameOriginPost(headers, ORIGIN)).toBe(allowed);
  });
});

describe("form tokens", () => {
  const key = randomBytes(32);
  it("are bound to the master key, the form, the user and the code id", () => {
    const token = formToken(key, "verification", "u1", "c1");
    expect(checkFormToken(key, "verification", "u1", "c1", token)).toBe(true);
    expect(checkFormToken(randomBytes(32), "verification", "u1", "c1", token)).toBe(false);
    expect(checkFormToken(key, "init", "u1", "c1", token)).toBe(false);
    expect(checkFormToken(key, "verification", "u2", "c1", token)).toBe(false);
    expect(checkFormToken(key, "verification", "u1", "c2", token)).toBe(false);
    expect(checkFormToken(key, "verification", "u1", undefined, token)).toBe(false);
    expect(checkFormToken(key, "verification", "u1", "c1", "")).toBe(false);
    // A user without a code still gets a token of its own (the new-code form).
    expect(checkFormToken(key, "verification", "u1", undefined, formToken(key, "verification", "u1", undefined))).toBe(true);
  });

  it("are 256-bit HMACs in base64url, safe in an attribute", () => {
    expect(formToken(key, "init", "u1", "c1")).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });
});

describe("page markup", () => {
  it("escapes every value it is given, in text and attributes", () => {
    const hostile = `<img src=x onerror="alert(1)"> & 'Co'`;
    expect(escapeHtml(hostile)).toBe("&lt;img src=x onerror=&quot;alert(1)&quot;&gt; &amp; &#39;Co&#39;");
    const page = renderPage({ title: hostile, organizationName: hostile, body: html`<input value="${hostile}">` });
    expect(page).not.toContain("<img");
    expect(page).not.toContain('"alert');
    expect(page).toContain('<p class="organization">&lt;img src=x onerror=&quot;alert(1)&quot;&gt; &amp; &#39;Co&#39;</p>');
  });
});
