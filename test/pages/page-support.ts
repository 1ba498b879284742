/// <reference lib="dom" />
import type { Client } from "@connectrpc/connect";
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Browser, chromium, type Page } from "playwright-core";
import { expect } from "vitest";
import { SmtpService } from "../../gen/gatehouse/admin/v1/smtp_pb.js";
import { UserService } from "../../gen/gatehouse/admin/v1/user_pb.js";
import { Clients } from "../support/clients.js";
import { startTestServer, TestClock, type TestServer } from "../support/server.js";
import { startSmtpServer, type TestSmtpServer } from "../support/smtp.js";

/** Where the browser tests leave a screenshot of each page (git-ignored), for a reviewer to look at. */
export const SCREENSHOT_DIR = join(process.cwd(), "test-results", "pages");

export const VERIFICATION_PATH = "/ui/login/mail/verification";
export const INIT_PATH = "/ui/login/user/init";

/** A port free right now, so the server can be started with an external URL that names it (the links in its mails). */
async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const { port } = probe.address() as { port: number };
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

export interface PagesWorld {
  server: TestServer;
  clients: Clients;
  relay: TestSmtpServer;
  /** The admin's UserService client (Connect JSON). */
  users: Client<typeof UserService>;
  close(): Promise<void>;
}

/**
 * A Gatehouse whose GATEHOUSE_EXTERNAL_URL is its own address (so the links in its mails open its pages, and its
 * pages' origin is the one their forms must come from), with a clock that runs with real time but can be moved on
 * (expiry, the new-code limit), mailing through a real SMTP server that records what it receives.
 */
export async function startPagesWorld(): Promise<PagesWorld> {
  const port = await freePort();
  const server = await startTestServer({
    clock: new TestClock(new Date(), true),
    config: { port, externalUrl: `http://127.0.0.1:${port}`, mail: { smtpTimeoutMs: 2_000, pollMs: 50, maxAttempts: 6, retryBaseMs: 100 } },
  });
  const clients = new Clients(server.url);
  const relay = await startSmtpServer({ tls: "none" });
  const admin = { token: server.adminToken };
  await clients.client(SmtpService, "connect-json-http1", admin).createSmtpConfig({ senderAddress: "noreply@gatehouse.test", senderName: "Gatehouse", tls: false, host: `127.0.0.1:${relay.port}`, user: "" });
  return {
    server,
    clients,
    relay,
    users: clients.client(UserService, "connect-json-http1", admin),
    async close() {
      clients.close();
      await server.dispose();
      await relay.close();
    },
  };
}

/** The text of a received message with quoted-printable undone (soft line breaks, =XX escapes). */
export function decodedRaw(raw: string): string {
  return raw.replace(/=\r?\n/g, "").replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));
}

/** The link to `path` in a received message (its text part, the first one). */
export function linkInMail(raw: string, path: string): string {
  const escaped = path.replace(/[/.]/g, (c) => `\\${c}`);
  const link = new RegExp(`https?://[^\\s"<>]+${escaped}\\?[^\\s"<>]+`).exec(decodedRaw(raw))?.[0];
  if (!link) throw new Error(`no link to ${path} in the mail`);
  return link;
}

/** Waits for the `nth` (1-based) mail to `email` at the relay and returns its link to `path`. */
export async function nthLinkTo(world: PagesWorld, email: string, path: string, nth = 1): Promise<string> {
  await world.relay.waitFor(() => world.relay.received.filter((m) => m.to.includes(email)).length >= nth, 15_000);
  const mail = world.relay.received.filter((m) => m.to.includes(email))[nth - 1]!;
  return linkInMail(mail.raw, path);
}

/**
 * Debian's chromium, installed with apt-get when missing (the machines run as root). The page test files run in
 * parallel workers, and on a fresh machine each finds chromium missing: the installs take turns under one lock file
 * (the second finds chromium there), and apt-get waits for a dpkg lock held by anyone else instead of failing at once.
 */
export function ensureChromium(): void {
  if (existsSync("/usr/bin/chromium")) return;
  const install = "test -x /usr/bin/chromium || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=600 chromium >/dev/null; }";
  execFileSync("flock", [join(tmpdir(), "gatehouse-chromium-install.lock"), "bash", "-c", install], { stdio: "inherit" });
}

export async function launchChromium(): Promise<Browser> {
  ensureChromium();
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  return chromium.launch({
    executablePath: "/usr/bin/chromium",
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
}

/** A phone-sized tab (390 × 844 CSS pixels, as an iPhone 12–15), recording what it requests and what the CSP refuses. */
export async function phoneTab(browser: Browser) {
  const context = await browser.newContext({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true });
  const page = await context.newPage();
  const requests: { url: string; method: string; body: string | null }[] = [];
  const consoleErrors: string[] = [];
  page.on("request", (request) => requests.push({ url: request.url(), method: request.method(), body: request.postData() }));
  page.on("console", (entry) => {
    // A 4xx page is logged as a failed load too; what matters here is what the CSP refused.
    if (entry.type() === "error" && /Content Security Policy|Refused/i.test(entry.text())) consoleErrors.push(entry.text());
  });
  return { page, requests, consoleErrors, close: () => context.close() };
}

export async function screenshot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: join(SCREENSHOT_DIR, `${name}.png`), fullPage: true });
}

/**
 * What every page must be, checked in the browser: English, the stylesheet applied (the CSP let it in and nothing
 * was refused), no script, one column that fits the phone, and no URL the page points to (links, the stylesheet,
 * form actions) that carries the code.
 */
export async function expectWellFormedPage(tab: Awaited<ReturnType<typeof phoneTab>>, code: string): Promise<void> {
  const { page } = tab;
  expect(await page.getAttribute("html", "lang")).toBe("en");
  expect(await page.locator("script").count()).toBe(0);
  expect(tab.consoleErrors, "the CSP refused nothing the page needs").toEqual([]);
  // The served stylesheet is in force: main has its white card background.
  expect(await page.evaluate(() => getComputedStyle(document.querySelector("main")!).backgroundColor)).toBe("rgb(255, 255, 255)");
  const fits = await page.evaluate(() => document.documentElement.scrollWidth <= document.documentElement.clientWidth);
  expect(fits, "no horizontal scrolling on a phone").toBe(true);
  const pointsTo = await page.evaluate(() => [
    ...Array.from(document.querySelectorAll<HTMLAnchorElement | HTMLLinkElement>("a[href], link[href]"), (e) => e.href),
    ...Array.from(document.querySelectorAll<HTMLFormElement>("form"), (f) => f.action),
  ]);
  for (const url of pointsTo) expect(url.toUpperCase()).not.toContain(code.toUpperCase());
}

/** The WCAG contrast ratio of two CSS rgb() colours. */
export function contrastRatio(foreground: string, background: string): number {
  const luminance = (rgb: string) => {
    const [r, g, b] = (rgb.match(/\d+(\.\d+)?/g) ?? []).slice(0, 3).map(Number).map((v) => {
      const c = v / 255;
      return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * r! + 0.7152 * g! + 0.0722 * b!;
  };
  const [light, dark] = [luminance(foreground), luminance(background)].sort((a, b) => b - a);
  return (light! + 0.05) / (dark! + 0.05);
}
