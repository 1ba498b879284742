import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EventService } from "../../gen/gatehouse/admin/v1/event_pb.js";
import { UserState } from "../../gen/gatehouse/admin/v1/user_pb.js";
import { expectWellFormedPage, INIT_PATH, launchChromium, nthLinkTo, phoneTab, type PagesWorld, screenshot, startPagesWorld } from "./page-support.js";

/**
 * The set-first-password page in headless Chromium, from the initialization mail the test relay received: a user an
 * admin created without a password (and with an unverified email) sets one, and the API shows the user ACTIVE.
 */
let world: PagesWorld;
let browser: Browser;
let n = 0;
const PASSWORD = "Correct-Horse-7";

beforeAll(async () => {
  [world, browser] = await Promise.all([startPagesWorld(), launchChromium()]);
}, 600_000);
afterAll(async () => {
  await browser?.close();
  await world?.close();
});

/** A user created without a password, email unverified: INITIAL, with the set-password link in its initialization mail. */
async function invitedUser() {
  const email = `init-${++n}@example.com`;
  const userName = `init-${n}`;
  const { userId } = await world.users.createHumanUser({ userName, profile: { firstName: "Grace", lastName: "Hopper" }, email: { email } });
  const link = await nthLinkTo(world, email, INIT_PATH);
  return { userId, userName, email, link, code: new URL(link).searchParams.get("code")! };
}
const stateOf = async (userId: string) => {
  const { user } = await world.users.getUser({ userId });
  return { state: user?.state, verified: user?.type.case === "human" ? user.type.value.email?.isEmailVerified : undefined };
};
const eventTypes = async (userId: string) =>
  (await world.clients.client(EventService, "connect-json-http1", { token: world.server.adminToken }).listEvents({ aggregateId: userId })).events;

describe("the set-password page (/ui/login/user/init)", () => {
  it("opens from the initialization mail with the policy's rules, sets the password, verifies the email with the same code", async () => {
    const { userId, userName, link, code } = await invitedUser();
    const tab = await phoneTab(browser);
    try {
      await tab.page.goto(link);
      await expect.poll(() => tab.page.locator(".organization").textContent()).toBe("Gatehouse");
      const rules = await tab.page.locator("#password-rules li").allTextContents();
      expect(rules).toEqual(["at least 8 characters", "an upper-case letter", "a lower-case letter", "a digit", "a symbol (neither a letter nor a digit)"]);
      expect(await tab.page.getByLabel("New password").getAttribute("aria-describedby")).toBe("password-rules");
      await expectWellFormedPage(tab, code);
      await screenshot(tab.page, "init-form");

      await tab.page.getByLabel("New password").fill(PASSWORD);
      await tab.page.getByLabel("Repeat the password").fill(PASSWORD);
      await tab.page.getByRole("button", { name: "Set my password" }).click();
      await expect.poll(() => tab.page.locator("#message").textContent()).toContain("Your password is set.");
      const done = await tab.page.locator("#message").textContent();
      expect(done).toContain(`Sign in with your user name “${userName}”`);
      expect(done).toContain("Your email address is verified too.");
      await expectWellFormedPage(tab, code);
      await screenshot(tab.page, "init-done");
      // The code went in the GET's URL only, and in the post's body; the password never in a URL.
      const post = tab.requests.find((r) => r.method === "POST")!;
      expect(new URL(post.url).search).toBe("");
      expect(new URLSearchParams(post.body ?? "").get("code")).toBe(code);
      expect(tab.requests.filter((r) => r.url.toUpperCase().includes(code)).map((r) => r.method)).toEqual(["GET"]);
      expect(tab.requests.some((r) => r.url.includes(PASSWORD))).toBe(false);

      // The link again: nothing more to do.
      await tab.page.goto(link);
      await expect.poll(() => tab.page.locator("#message").textContent()).toContain("Your account has a password already.");
      await screenshot(tab.page, "init-already-set-up");
    } finally {
      await tab.close();
    }
    expect(await stateOf(userId)).toEqual({ state: UserState.ACTIVE, verified: true });
    const initialized = (await eventTypes(userId)).find((e) => e.eventType === "user.initialized");
    expect(initialized?.actor).toBe(userId);
  });

  it("refuses a password the policy refuses, and two passwords that differ, without spending an attempt", async () => {
    const { userId, link } = await invitedUser();
    const tab = await phoneTab(browser);
    try {
      await tab.page.goto(link);
      await tab.page.getByLabel("New password").fill("short");
      await tab.page.getByLabel("Repeat the password").fill("short");
      await tab.page.getByRole("button", { name: "Set my password" }).click();
      await expect.poll(() => tab.page.getByRole("alert").textContent()).toBe(
        "The password does not meet the rules. It still needs: at least 8 characters, an upper-case letter, a digit, a symbol (neither a letter nor a digit).",
      );
      expect(await tab.page.getByLabel("New password").inputValue(), "the password is not sent back").toBe("");
      expect(await tab.page.getByLabel("New password").getAttribute("aria-invalid")).toBe("true");
      await screenshot(tab.page, "init-policy-refused");

      await tab.page.getByLabel("New password").fill(PASSWORD);
      await tab.page.getByLabel("Repeat the password").fill(`${PASSWORD}!`);
      await tab.page.getByRole("button", { name: "Set my password" }).click();
      await expect.poll(() => tab.page.getByRole("alert").textContent()).toBe("The two passwords are not the same. Type the same password twice.");
      await screenshot(tab.page, "init-passwords-differ");

      await tab.page.getByLabel("New password").fill(PASSWORD);
      await tab.page.getByLabel("Repeat the password").fill(PASSWORD);
      await tab.page.getByRole("button", { name: "Set my password" }).click();
      await expect.poll(() => tab.page.locator("#message").textContent()).toContain("Your password is set.");
    } finally {
      await tab.close();
    }
    expect((await eventTypes(userId)).filter((e) => e.eventType === "user.initialization.failed")).toEqual([]);
    expect(await stateOf(userId)).toEqual({ state: UserState.ACTIVE, verified: true });
  });

  it("says a damaged code is not right (attempts left), and after five its link offers only a new code", async () => {
    const { userId, link, code } = await invitedUser();
    const damaged = new URL(link);
    damaged.searchParams.set("code", (code[0] === "A" ? "B" : "A") + code.slice(1));
    const tab = await phoneTab(browser);
    try {
      for (let attempt = 1; attempt <= 5; attempt++) {
        await tab.page.goto(damaged.toString());
        await tab.page.getByLabel("New password").fill(PASSWORD);
        await tab.page.getByLabel("Repeat the password").fill(PASSWORD);
        await tab.page.getByRole("button", { name: "Set my password" }).click();
        await tab.page.waitForLoadState();
        if (attempt === 1) {
          await expect.poll(() => tab.page.getByRole("alert").textContent()).toContain("The code in this link is not right (4 attempts are left).");
          await screenshot(tab.page, "init-wrong-code");
        }
      }
      await expect.poll(() => tab.page.getByRole("alert").textContent()).toContain("it was the last attempt");
      await tab.page.goto(link);
      await expect.poll(() => tab.page.getByRole("alert").textContent()).toContain("entered wrongly too many times");
      expect(await tab.page.getByLabel("New password").count()).toBe(0);
      await screenshot(tab.page, "init-exhausted");
    } finally {
      await tab.close();
    }
    expect(await stateOf(userId)).toEqual({ state: UserState.INITIAL, verified: false });
  });

  it("shows an expired invitation as such; the new code comes by mail and its link sets the password", async () => {
    const { userId, email, link } = await invitedUser();
    world.server.clock.advance(72 * 3_600_000 + 1_000);
    const tab = await phoneTab(browser);
    try {
      await tab.page.goto(link);
      await expect.poll(() => tab.page.getByRole("alert").textContent()).toBe("The code in this link has expired.");
      await screenshot(tab.page, "init-expired");
      await tab.page.getByRole("button", { name: "Send me a new code" }).click();
      await expect.poll(() => tab.page.locator("#message").textContent()).toContain("We have sent a new code");
    } finally {
      await tab.close();
    }
    const newLink = await nthLinkTo(world, email, INIT_PATH, 2);
    expect(newLink).not.toBe(link);
    const tab2 = await phoneTab(browser);
    try {
      await tab2.page.goto(newLink);
      await tab2.page.getByLabel("New password").fill(PASSWORD);
      await tab2.page.getByLabel("Repeat the password").fill(PASSWORD);
      await tab2.page.getByRole("button", { name: "Set my password" }).click();
      await expect.poll(() => tab2.page.locator("#message").textContent()).toContain("Your password is set.");
    } finally {
      await tab2.close();
    }
    // The new code was mailed to the same address, so it verified the email as well.
    expect(await stateOf(userId)).toEqual({ state: UserState.ACTIVE, verified: true });
  });

  it("is usable with the keyboard alone: password, repeat, button; Enter submits", async () => {
    const { userId, link } = await invitedUser();
    const tab = await phoneTab(browser);
    try {
      await tab.page.goto(link);
      const focused = async () => tab.page.evaluate(() => document.activeElement?.id || document.activeElement?.textContent);
      await tab.page.keyboard.press("Tab");
      expect(await focused()).toBe("password");
      await tab.page.keyboard.type(PASSWORD);
      await tab.page.keyboard.press("Tab");
      expect(await focused()).toBe("confirmation");
      await tab.page.keyboard.type(PASSWORD);
      await tab.page.keyboard.press("Tab");
      expect(await focused()).toBe("Set my password");
      expect(await tab.page.evaluate(() => getComputedStyle(document.activeElement!).outlineStyle)).toBe("solid");
      await tab.page.keyboard.press("Enter");
      await expect.poll(() => tab.page.locator("#message").textContent()).toContain("Your password is set.");
    } finally {
      await tab.close();
    }
    expect((await stateOf(userId)).state).toBe(UserState.ACTIVE);
  });
});
