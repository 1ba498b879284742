import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EventService } from "../../gen/gatehouse/admin/v1/event_pb.js";
import { UserState } from "../../gen/gatehouse/admin/v1/user_pb.js";
import { contrastRatio, expectWellFormedPage, launchChromium, nthLinkTo, phoneTab, type PagesWorld, screenshot, startPagesWorld, VERIFICATION_PATH } from "./page-support.js";

/**
 * The email verification page in headless Chromium, from the link in a mail the test relay really received: the
 * person's whole way, and what the API shows afterwards.
 */
let world: PagesWorld;
let browser: Browser;
let n = 0;

beforeAll(async () => {
  [world, browser] = await Promise.all([startPagesWorld(), launchChromium()]);
}, 600_000);
afterAll(async () => {
  await browser?.close();
  await world?.close();
});

/** A user with a password and an unverified email (INITIAL until verified), and the verification link mailed to them. */
async function userWithMailedLink() {
  const email = `page-${++n}@example.com`;
  const { userId } = await world.users.createHumanUser({ userName: `page-${n}`, profile: { firstName: "Ada", lastName: "Lovelace" }, email: { email }, password: "Sup3r-secret!" });
  const link = await nthLinkTo(world, email, VERIFICATION_PATH);
  const code = new URL(link).searchParams.get("code")!;
  return { userId, email, link, code };
}
const wrong = (code: string) => (code[0] === "A" ? "B" : "A") + code.slice(1);
const stateOf = async (userId: string) => {
  const { user } = await world.users.getUser({ userId });
  return { state: user?.state, verified: user?.type.case === "human" ? user.type.value.email?.isEmailVerified : undefined };
};
const events = () => world.clients.client(EventService, "connect-json-http1", { token: world.server.adminToken });

describe("the email verification page (/ui/login/mail/verification)", () => {
  it("opens from the delivered mail with the organization's name and the code filled in, verifies, and the user is ACTIVE", async () => {
    const { userId, link, code } = await userWithMailedLink();
    const tab = await phoneTab(browser);
    try {
      await tab.page.goto(link);
      await expect.poll(() => tab.page.locator(".organization").textContent()).toBe("Gatehouse");
      expect(await tab.page.getByLabel("Code from the mail").inputValue()).toBe(code);
      await expectWellFormedPage(tab, code);
      await screenshot(tab.page, "verification-form");

      await tab.page.getByRole("button", { name: "Verify my email address" }).click();
      await expect.poll(() => tab.page.locator("#message").textContent()).toContain("Your email address is verified");
      await expectWellFormedPage(tab, code);
      await screenshot(tab.page, "verification-done");
      // The code went in the URL of the GET only; the post carried it in its body, to the path without a query.
      const post = tab.requests.find((r) => r.method === "POST")!;
      expect(new URL(post.url).search).toBe("");
      expect(new URLSearchParams(post.body ?? "").get("code")).toBe(code);
      expect(tab.requests.filter((r) => r.url.toUpperCase().includes(code)).map((r) => r.method)).toEqual(["GET"]);
    } finally {
      await tab.close();
    }
    expect(await stateOf(userId)).toEqual({ state: UserState.ACTIVE, verified: true });
    // VerifyEmail's own command ran, as the user themself.
    const verified = (await events().listEvents({ aggregateId: userId })).events.find((e) => e.eventType === "user.email.verified");
    expect(verified?.actor).toBe(userId);
  });

  it("says how many attempts are left after a wrong code, keeps the field usable, and then takes the right one", async () => {
    const { userId, link, code } = await userWithMailedLink();
    const tab = await phoneTab(browser);
    try {
      await tab.page.goto(link);
      const field = tab.page.getByLabel("Code from the mail");
      await field.fill(wrong(code));
      await tab.page.getByRole("button", { name: "Verify my email address" }).click();
      await expect.poll(() => tab.page.getByRole("alert").textContent()).toBe("That code is not right. 4 attempts are left.");
      expect(await field.getAttribute("aria-invalid")).toBe("true");
      await screenshot(tab.page, "verification-wrong-code");
      expect(await stateOf(userId)).toEqual({ state: UserState.INITIAL, verified: false });

      await field.fill(code.toLowerCase());
      await tab.page.getByRole("button", { name: "Verify my email address" }).click();
      await expect.poll(() => tab.page.locator("#message").textContent()).toContain("Your email address is verified");
    } finally {
      await tab.close();
    }
    expect(await stateOf(userId)).toEqual({ state: UserState.ACTIVE, verified: true });
  });

  it("after five wrong codes shows the used-up page; a new code is refused within the minute, then mailed, and its link verifies", async () => {
    const { userId, email, link, code } = await userWithMailedLink();
    let sentPage = "";
    const tab = await phoneTab(browser);
    try {
      await tab.page.goto(link);
      for (let attempt = 1; attempt <= 5; attempt++) {
        await tab.page.getByLabel("Code from the mail").fill(wrong(code));
        await tab.page.getByRole("button", { name: "Verify my email address" }).click();
        await tab.page.waitForLoadState();
      }
      await expect.poll(() => tab.page.getByRole("alert").textContent()).toContain("it was the last attempt");
      // Even the right code no longer works: the page for the link now says the code is used up.
      await tab.page.goto(link);
      await expect.poll(() => tab.page.getByRole("alert").textContent()).toContain("entered wrongly too many times");
      await expectWellFormedPage(tab, code);
      await screenshot(tab.page, "verification-exhausted");

      // The initialization mail went out a moment ago: no new code within the minute.
      await tab.page.getByRole("button", { name: "Send me a new code" }).click();
      await expect.poll(() => tab.page.getByRole("alert").textContent()).toContain("only a short while ago");
      await screenshot(tab.page, "new-code-limited");
      expect(world.relay.received.filter((m) => m.to.includes(email))).toHaveLength(1);

      world.server.clock.advance(61_000);
      await tab.page.goto(link);
      await tab.page.getByRole("button", { name: "Send me a new code" }).click();
      await expect.poll(() => tab.page.locator("#message").textContent()).toContain("We have sent a new code");
      await expectWellFormedPage(tab, code);
      await screenshot(tab.page, "new-code-sent");
      sentPage = await tab.page.content();
    } finally {
      await tab.close();
    }
    const newLink = await nthLinkTo(world, email, VERIFICATION_PATH, 2);
    const newCode = new URL(newLink).searchParams.get("code")!;
    expect(newCode).not.toBe(code);
    expect(sentPage.toUpperCase(), "the new code goes by mail only").not.toContain(newCode);
    const tab2 = await phoneTab(browser);
    try {
      await tab2.page.goto(newLink);
      await tab2.page.getByRole("button", { name: "Verify my email address" }).click();
      await expect.poll(() => tab2.page.locator("#message").textContent()).toContain("Your email address is verified");
      // The link of the old mail now says there is nothing left to do.
      await tab2.page.goto(link);
      await expect.poll(() => tab2.page.locator("#message").textContent()).toContain("verified already");
      await screenshot(tab2.page, "verification-already-verified");
    } finally {
      await tab2.close();
    }
    expect(await stateOf(userId)).toEqual({ state: UserState.ACTIVE, verified: true });
  });

  it("shows an expired code as such, with a button that mails a new one", async () => {
    const { userId, email, link, code } = await userWithMailedLink();
    world.server.clock.advance(3_600_000 + 1_000);
    const tab = await phoneTab(browser);
    try {
      await tab.page.goto(link);
      await expect.poll(() => tab.page.getByRole("alert").textContent()).toBe("The code in this link has expired.");
      expect(await tab.page.getByLabel("Code from the mail").count()).toBe(0);
      await expectWellFormedPage(tab, code);
      await screenshot(tab.page, "verification-expired");
      await tab.page.getByRole("button", { name: "Send me a new code" }).click();
      await expect.poll(() => tab.page.locator("#message").textContent()).toContain("We have sent a new code");
    } finally {
      await tab.close();
    }
    const newLink = await nthLinkTo(world, email, VERIFICATION_PATH, 2);
    expect(new URL(newLink).searchParams.get("code")).not.toBe(code);
    expect(await stateOf(userId)).toEqual({ state: UserState.INITIAL, verified: false });
  });

  it("is usable with the keyboard alone: the field, then the button, each with a visible focus ring; text has AA contrast", async () => {
    const { link } = await userWithMailedLink();
    const tab = await phoneTab(browser);
    try {
      await tab.page.goto(link);
      await tab.page.keyboard.press("Tab");
      expect(await tab.page.evaluate(() => document.activeElement?.id)).toBe("code");
      const ring = await tab.page.evaluate(() => getComputedStyle(document.activeElement!).outlineStyle);
      expect(ring).toBe("solid");
      await tab.page.keyboard.press("Tab");
      expect(await tab.page.evaluate(() => document.activeElement?.textContent)).toBe("Verify my email address");
      expect(await tab.page.evaluate(() => getComputedStyle(document.activeElement!).outlineStyle)).toBe("solid");
      const colours = await tab.page.evaluate(() =>
        ["h1", "p", "label", ".hint", "button", ".organization"].map((selector) => {
          const element = document.querySelector(selector)!;
          let background = "rgba(0, 0, 0, 0)";
          for (let e: Element | null = element; e && background === "rgba(0, 0, 0, 0)"; e = e.parentElement) background = getComputedStyle(e).backgroundColor;
          return { selector, color: getComputedStyle(element).color, background };
        }),
      );
      for (const { selector, color, background } of colours) expect(contrastRatio(color, background), selector).toBeGreaterThanOrEqual(4.5);
      // Enter in the field submits the form: no pointer needed.
      await tab.page.focus("#code");
      await tab.page.keyboard.press("Enter");
      await expect.poll(() => tab.page.locator("#message").textContent()).toContain("Your email address is verified");
    } finally {
      await tab.close();
    }
  });
});
