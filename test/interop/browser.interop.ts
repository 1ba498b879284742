/// <reference lib="dom" />
import { build } from "esbuild";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { chromium, type Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, useTestServer } from "../support/server.js";

/**
 * Headless Debian Chromium loads a page from one origin that calls Gatehouse on another with
 * connect-web's gRPC-web transport: the browser enforces CORS, so this proves the preflight and
 * exposed headers work, and that typed errors survive the browser's fetch.
 */
let page: Server;
let pageOrigin = "";
const pageServer = createServer();
let bundle = "";

beforeAll(async () => {
  const result = await build({ entryPoints: [fileURLToPath(new URL("./browser/page.ts", import.meta.url))], bundle: true, write: false, format: "esm", platform: "browser", target: "es2022" });
  bundle = result.outputFiles[0]!.text;
  page = pageServer.on("request", (req, res) => {
    if (req.url?.startsWith("/page.js")) {
      res.writeHead(200, { "content-type": "text/javascript" });
      res.end(bundle);
      return;
    }
    res.writeHead(200, { "content-type": "text/html" });
    res.end(`<!doctype html><html><head><title>loading</title></head><body><script type="module" src="/page.js"></script></body></html>`);
  });
  await new Promise<void>((resolve) => page.listen(0, "127.0.0.1", () => resolve()));
  pageOrigin = `http://localhost:${(page.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => page.close(() => resolve())));

// The page's origin (localhost:<port>) differs from the server's (127.0.0.1:<port>).
const t = useTestServer({ config: { corsOrigins: [] } });

describe("headless Chromium with connect-web (gRPC-web), cross-origin", () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await chromium.launch({
      executablePath: "/usr/bin/chromium",
      args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
    });
  });
  afterAll(async () => browser?.close());

  async function runPage(server: { url: string; adminToken: string }): Promise<Record<string, unknown>> {
    const tab = await browser.newPage();
    try {
      await tab.goto(`${pageOrigin}/?server=${encodeURIComponent(server.url)}&token=${encodeURIComponent(server.adminToken)}`);
      await tab.waitForFunction(() => document.title === "done", undefined, { timeout: 20_000 });
      return JSON.parse((await tab.evaluate(() => document.body.dataset.result)) ?? "{}") as Record<string, unknown>;
    } finally {
      await tab.close();
    }
  }

  it("is blocked by CORS while the page's origin is not allowed", async () => {
    const result = await runPage(t.server);
    expect(String(result.failed)).toMatch(/fetch|network|CORS/i);
  });

  it("succeeds and sees typed errors once the origin is allowed", async () => {
    // Allowed origins are read at start, so a second server allows the page's origin.
    const allowed = await startTestServer({ config: { corsOrigins: [pageOrigin] } });
    try {
      const result = await runPage(allowed);
      expect(result.failed).toBeUndefined();
      expect(result.userId).toEqual(expect.any(String));
      expect(result.invalid).toMatchObject({ code: "InvalidArgument", reason: "request.invalid", fields: ["user_name"] });
      expect(result.missing).toMatchObject({ code: "NotFound", reason: "user.not_found" });
      expect((result.missing as { requestId?: string }).requestId).toEqual(expect.any(String));
    } finally {
      await allowed.dispose();
    }
  });
});
