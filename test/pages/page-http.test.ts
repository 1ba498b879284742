import { describe, expect, it } from "vitest";
import { EventService } from "../../gen/gatehouse/admin/v1/event_pb.js";
import { InstanceService } from "../../gen/gatehouse/admin/v1/instance_pb.js";
import { OrganizationService } from "../../gen/gatehouse/admin/v1/organization_pb.js";
import { UserService, UserState } from "../../gen/gatehouse/admin/v1/user_pb.js";
import { IdentityProviderService } from "../../gen/gatehouse/admin/v1/identity_provider_pb.js";
import { formToken } from "../../src/pages/form-guard.js";
import { emailCodeIn, lastMailTo, queuedMails } from "../support/outbox.js";
import { useTestServer } from "../support/server.js";
import { storedRows } from "../support/stored-rows.js";

/**
 * The pages over plain HTTP: the headers of every answer, the CSRF guards, bad input, and what the log keeps. The
 * server's external URL is another origin than the one the test reaches it at, as behind a proxy: the external
 * origin is the one posts must come from.
 */
const EXTERNAL = "https://iam.example.com";
const t = useTestServer({ config: { externalUrl: EXTERNAL } });
const PATH = "/ui/login/mail/verification";
let n = 0;

const users = () => t.clients.client(UserService, "connect-json-http1", { token: t.server.adminToken });
const events = () => t.clients.client(EventService, "connect-json-http1", { token: t.server.adminToken });

async function newUser() {
  const email = `http-${++n}@example.com`;
  const { userId } = await users().createHumanUser({ userName: `http-${n}`, profile: { firstName: "Hal", lastName: "Tee" }, email: { email }, password: "Sup3r-secret!" });
  const mail = (await lastMailTo(t.server, email))!;
  const link = new URL(/https:\/\/\S+verification\?\S+/.exec(mail.text)![0]);
  return { userId, email, orgId: link.searchParams.get("orgID")!, code: emailCodeIn(mail)!, query: link.search };
}

const get = (pathAndQuery: string, headers: Record<string, string> = {}) => fetch(`${t.server.url}${pathAndQuery}`, { headers, redirect: "manual" });
/** A form post as a browser makes it from the page (Origin null under no-referrer, Sec-Fetch-Site same-origin). */
const post = (fields: Record<string, string> | string, headers: Record<string, string> = { origin: "null", "sec-fetch-site": "same-origin" }, path = PATH) =>
  fetch(`${t.server.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
    body: typeof fields === "string" ? fields : new URLSearchParams(fields),
    redirect: "manual",
  });
const tokenIn = (html: string) => /name="token" value="([^"]+)"/.exec(html)?.[1];
/** The page's form token, as a browser that opened the link would have it. */
async function tokenFor(user: { query: string }) {
  const token = tokenIn(await (await get(`${PATH}${user.query}`)).text());
  if (!token) throw new Error("the page has a form token");
  return token;
}
const verified = async (userId: string) => {
  const { user } = await users().getUser({ userId });
  return user?.type.case === "human" ? user.type.value.email?.isEmailVerified : undefined;
};
const failedAttempts = async (userId: string) => (await events().listEvents({ aggregateId: userId })).events.filter((e) => e.eventType === "user.email.verification.failed").length;

function expectPageHeaders(response: Response, contentType = "text/html; charset=utf-8") {
  expect(response.headers.get("content-security-policy")).toBe("default-src 'none'; style-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'");
  expect(response.headers.get("x-frame-options")).toBe("DENY");
  expect(response.headers.get("referrer-policy")).toBe("no-referrer");
  expect(response.headers.get("cache-control")).toBe("no-store");
  expect(response.headers.get("x-content-type-options")).toBe("nosniff");
  expect(response.headers.get("content-type")).toBe(contentType);
}

describe("the pages' security headers", () => {
  it("are on every answer: form, dead code, bad and unknown links, refused posts, the stylesheet, unknown pages and methods", async () => {
    const user = await newUser();
    const dead = await newUser();
    await users().setEmail({ userId: dead.userId, email: "other@example.com", isVerified: true, returnCode: false });
    const answers: [string, Response, number][] = [
      ["form", await get(`${PATH}${user.query}`), 200],
      ["already verified", await get(`${PATH}${dead.query}`), 200],
      ["missing ids", await get(`${PATH}?code=ABCDEF`), 400],
      ["unknown user", await get(`${PATH}?userID=nobody&orgID=${user.orgId}&code=ABCDEF`), 404],
      ["cross-site post", await post({ userID: user.userId, orgID: user.orgId, code: user.code }, { "sec-fetch-site": "cross-site" }), 403],
      ["wrong token", await post({ userID: user.userId, orgID: user.orgId, code: user.code, token: "x" }), 403],
      ["not a form", await post("{}", { "content-type": "application/json" }), 415],
      ["too large", await post({ userID: user.userId, orgID: user.orgId, code: "x".repeat(20_000) }), 413],
      ["unknown page", await get("/ui/login/nothing-here"), 404],
      ["other method", await fetch(`${t.server.url}${PATH}`, { method: "PUT" }), 405],
    ];
    for (const [what, response, status] of answers) {
      expect(response.status, what).toBe(status);
      expectPageHeaders(response);
      expect(await response.text(), what).toMatch(/^<!doctype html>\n<html lang="en">/);
    }
    expect(answers.find(([what]) => what === "other method")![1].headers.get("allow")).toBe("GET, HEAD, POST");
    const css = await get("/ui/login/assets/pages.css");
    expect(css.status).toBe(200);
    expectPageHeaders(css, "text/css; charset=utf-8");
    expect(await css.text()).toContain(":focus-visible");
  });

  it("allow no script at all: the CSP has no script source, nothing inline, and the pages hold no <script> or inline style", async () => {
    const user = await newUser();
    const response = await get(`${PATH}${user.query}`);
    const csp = response.headers.get("content-security-policy")!;
    expect(csp).not.toMatch(/script-src|unsafe-inline|unsafe-eval|\*/);
    const page = await response.text();
    expect(page).not.toMatch(/<script|<style|\sstyle=|\son[a-z]+=/i);
    expect(page).toContain('<meta name="viewport" content="width=device-width, initial-scale=1">');
  });
});

describe("the pages' CSRF guards", () => {
  it("refuse a post from another site even with the right code and token; nothing is tried", async () => {
    const user = await newUser();
    const token = await tokenFor(user);
    const fields = { userID: user.userId, orgID: user.orgId, code: user.code, token };
    const forged: Record<string, string>[] = [
      { origin: "https://evil.example" },
      { origin: "https://evil.example", "sec-fetch-site": "cross-site" },
      { "sec-fetch-site": "same-site" },
      // Origin null says nothing on its own (a sandboxed frame sends it too): it passes only with Sec-Fetch-Site.
      { origin: "null" },
      // The address Gatehouse is reached at is not its origin: the external URL is.
      { origin: t.server.url },
    ];
    for (const headers of forged) {
      const response = await post(fields, headers);
      expect(response.status, JSON.stringify(headers)).toBe(403);
      expect(await response.text()).toContain("This form was not sent from this site");
    }
    expect(await verified(user.userId)).toBe(false);
    expect(await failedAttempts(user.userId)).toBe(0);
    // The same post from the page's own origin goes through.
    expect((await post(fields, { origin: EXTERNAL, "sec-fetch-site": "same-origin" })).status).toBe(200);
    expect(await verified(user.userId)).toBe(true);
  });

  it("refuse a post without the form token, or with another user's, before the code is tried", async () => {
    const user = await newUser();
    const other = await newUser();
    const fields = { userID: user.userId, orgID: user.orgId, code: user.code };
    const missing = await post(fields);
    expect(missing.status).toBe(403);
    expect(await missing.text()).toContain("This page is out of date, so nothing was done.");
    expect((await post({ ...fields, token: await tokenFor(other) })).status).toBe(403);
    expect((await post({ ...fields, token: "" })).status).toBe(403);
    expect(await verified(user.userId)).toBe(false);
    expect(await failedAttempts(user.userId)).toBe(0);
  });

  it("bind the token to the code: a page opened before a new code was issued can no longer post", async () => {
    const user = await newUser();
    const stale = await tokenFor(user);
    const { verificationCode } = await users().resendEmailCode({ userId: user.userId, returnCode: true });
    const refused = await post({ userID: user.userId, orgID: user.orgId, code: verificationCode!, token: stale });
    expect(refused.status).toBe(403);
    expect(await verified(user.userId)).toBe(false);
    // A client that sends no fetch metadata at all (curl) is left to the token, which a fresh page gives.
    const fresh = await tokenFor(user);
    expect((await post({ userID: user.userId, orgID: user.orgId, code: verificationCode!, token: fresh }, {})).status).toBe(200);
    expect(await verified(user.userId)).toBe(true);
  });
});

describe("the verification page's answer to a post", () => {
  const fieldsOf = (user: { userId: string; orgId: string }, token: string, code: string, intent?: string) => ({ userID: user.userId, orgID: user.orgId, code, token, ...(intent ? { intent } : {}) });

  it("asks for the code when none was entered, and counts no attempt", async () => {
    const user = await newUser();
    const answer = await post(fieldsOf(user, await tokenFor(user), ""));
    expect(answer.status).toBe(400);
    expect(await answer.text()).toContain("Enter the code from the mail.");
    expect(await failedAttempts(user.userId)).toBe(0);
  });

  it("says the code expired when it did while the page was open", async () => {
    const user = await newUser();
    const token = await tokenFor(user);
    t.server.clock.advance(60 * 60 * 1000 + 1);
    const answer = await post(fieldsOf(user, token, user.code));
    expect(await answer.text()).toContain("The code in this link has expired.");
    expect(await verified(user.userId)).toBe(false);
  });

  it("says the address is verified already when that happened while the page was open (another tab, an admin)", async () => {
    const user = await newUser();
    const token = await tokenFor(user);
    await users().verifyEmail({ userId: user.userId, verificationCode: user.code });
    const answer = await post(fieldsOf(user, token, user.code));
    expect(answer.status).toBe(200);
    expect(await answer.text()).toContain("Your email address is verified already. There is nothing more to do here.");
  });

  it("asked for a new code while the mailed one still works, says to enter that one", async () => {
    const user = await newUser();
    const answer = await post(fieldsOf(user, await tokenFor(user), "", "new_code"));
    expect(answer.status).toBe(200);
    expect(await answer.text()).toContain("The code in your newest mail still works: enter it here.");
  });
});

describe("the set-password page's answer to a post", () => {
  const INIT = "/ui/login/user/init";
  /** A user created without a password: its initialization mail's link, and the page's form token. */
  async function invited() {
    const email = `init-http-${++n}@example.com`;
    const { userId } = await users().createHumanUser({ userName: `init-http-${n}`, profile: { firstName: "In", lastName: "It" }, email: { email } });
    const mail = (await lastMailTo(t.server, email))!;
    const link = new URL(/https:\/\/\S+\/ui\/login\/user\/init\?\S+/.exec(mail.text)![0]);
    const token = tokenIn(await (await get(`${INIT}${link.search}`)).text());
    if (!token) throw new Error("the set-password page has a form token");
    const fields = (extra: Record<string, string>) => ({ userID: userId, orgID: link.searchParams.get("orgID")!, code: link.searchParams.get("code")!, token, ...extra });
    return { userId, fields };
  }
  const initPost = (fields: Record<string, string>) => post(fields, undefined, INIT);

  it("asks for a password when none was entered", async () => {
    const user = await invited();
    const answer = await initPost(user.fields({ password: "", confirmation: "" }));
    expect(await answer.text()).toContain("Enter a password.");
  });

  it("says the link expired when it did while the page was open, and sets nothing", async () => {
    const user = await invited();
    t.server.clock.advance(72 * 60 * 60 * 1000 + 1);
    const answer = await initPost(user.fields({ password: "Fresh-Start-2026", confirmation: "Fresh-Start-2026" }));
    expect(await answer.text()).toContain("The code in this link has expired.");
    const [row] = await storedRows<{ password_hash: string | null }>(t.server, "select password_hash from users where id = ?", user.userId);
    expect(row?.password_hash).toBeNull();
  });

  it("asked for a new link while the mailed one still works, says to open that one", async () => {
    const user = await invited();
    const answer = await initPost(user.fields({ intent: "new_code" }));
    expect(answer.status).toBe(200);
    expect(await answer.text()).toContain("The link in your newest mail still works: open it to set your password.");
  });
});

describe("bad input to the pages", () => {
  it("is a 4xx page, never a 500: missing, malformed, repeated and oversized parameters and bodies", async () => {
    const user = await newUser();
    const token = await tokenFor(user);
    const ids = `userID=${user.userId}&orgID=${user.orgId}`;
    const cases: [string, Promise<Response>, number][] = [
      ["no query", get(PATH), 400],
      ["no orgID", get(`${PATH}?userID=${user.userId}&code=${user.code}`), 400],
      ["empty userID", get(`${PATH}?userID=&orgID=${user.orgId}`), 400],
      ["a userID of 65 characters", get(`${PATH}?userID=${"a".repeat(65)}&orgID=${user.orgId}`), 400],
      ["a userID with markup", get(`${PATH}?userID=%3Cscript%3E&orgID=${user.orgId}`), 400],
      ["userID twice", get(`${PATH}?${ids}&userID=${user.userId}`), 400],
      ["a code of 21 characters", get(`${PATH}?${ids}&code=${"A".repeat(21)}`), 400],
      ["a code of 10 000 characters", get(`${PATH}?${ids}&code=${"A".repeat(10_000)}`), 400],
      ["a bad percent escape", get(`${PATH}?${ids}&code=%E0%A4%A`), 200],
      ["post without ids", post({ code: user.code, token }), 400],
      ["post with a code of 21 characters", post({ userID: user.userId, orgID: user.orgId, code: "A".repeat(21), token }), 400],
      ["post with the code twice", post(`userID=${user.userId}&orgID=${user.orgId}&token=${token}&code=${user.code}&code=${user.code}`), 400],
      ["post of 17 kB", post({ userID: user.userId, orgID: user.orgId, token, filler: "x".repeat(17_000) }), 413],
      ["post as multipart", post("--x--", { "content-type": "multipart/form-data; boundary=x", origin: "null", "sec-fetch-site": "same-origin" }), 415],
      ["post without a content type", fetch(`${t.server.url}${PATH}`, { method: "POST", headers: { origin: "null", "sec-fetch-site": "same-origin" } }), 415],
    ];
    for (const [what, response, status] of cases) {
      const answer = await response;
      expect(answer.status, what).toBe(status);
      expect(answer.headers.get("content-type"), what).toBe("text/html; charset=utf-8");
    }
    // None of it spent an attempt or verified anything.
    expect(await failedAttempts(user.userId)).toBe(0);
    expect(await verified(user.userId)).toBe(false);
  });

  it("answers an unknown user exactly as a user of another organization, a machine user and an unknown organization", async () => {
    const user = await newUser();
    const { organizationId: otherOrg } = await t.clients.client(OrganizationService, "connect-json-http1", { token: t.server.adminToken }).createOrganization({ name: `Other ${n}` });
    const { defaultOrganizationId } = await t.clients.client(InstanceService, "connect-json-http1", { token: t.server.adminToken }).getInstance({});
    const { userId: machine } = await users().createMachineUser({ userName: `bot-${n}`, name: "Bot" });
    const links = [
      `userID=0mwxunknownuser0000000000000&orgID=${user.orgId}`,
      `userID=${user.userId}&orgID=${otherOrg}`,
      `userID=${machine}&orgID=${defaultOrganizationId}`,
      `userID=${user.userId}&orgID=0mwxunknownorg00000000000000`,
    ];
    const answers = await Promise.all(links.map(async (query) => {
      const response = await get(`${PATH}?${query}&code=${user.code}`);
      return `${response.status} ${await response.text()}`;
    }));
    expect(answers[0]).toMatch(/^404 /);
    expect(answers[0]).toContain("This link does not work");
    expect(new Set(answers).size, "one answer for all of them").toBe(1);
    // The posts too, and they try no code.
    const posted = await Promise.all(links.map(async (query) => {
      const response = await post(`${query}&code=${user.code}&token=x`);
      return `${response.status} ${await response.text()}`;
    }));
    expect(new Set([...answers, ...posted]).size).toBe(1);
    expect(await failedAttempts(user.userId)).toBe(0);
  });

  it("refuses the links of a deactivated user without trying the code", async () => {
    const user = await newUser();
    const token = await tokenFor(user);
    await users().deactivateUser({ userId: user.userId });
    const shown = await get(`${PATH}${user.query}`);
    expect(shown.status).toBe(403);
    expect(await shown.text()).toContain("This account cannot be used right now");
    expect((await post({ userID: user.userId, orgID: user.orgId, code: user.code, token })).status).toBe(403);
    await users().reactivateUser({ userId: user.userId });
    expect(await verified(user.userId)).toBe(false);
    expect(await failedAttempts(user.userId)).toBe(0);
    const { user: read } = await users().getUser({ userId: user.userId });
    expect(read?.state).toBe(UserState.INITIAL);
  });

  it("refuses the links of a locked user and of a user of a deactivated organization alike", async () => {
    const locked = await newUser();
    await users().lockUser({ userId: locked.userId });
    const organizations = t.clients.client(OrganizationService, "connect-json-http1", { token: t.server.adminToken });
    const { organizationId } = await organizations.createOrganization({ name: `Paused ${++n}` });
    const email = `paused-${n}@example.com`;
    const { userId } = await t.clients
      .client(UserService, "connect-json-http1", { token: t.server.adminToken, orgId: organizationId })
      .createHumanUser({ userName: `paused-${n}`, profile: { firstName: "Pau", lastName: "Sed" }, email: { email }, password: "Sup3r-secret!" });
    const code = emailCodeIn((await lastMailTo(t.server, email))!)!;
    expect((await get(`${PATH}?userID=${userId}&orgID=${organizationId}&code=${code}`)).status).toBe(200);
    await organizations.deactivateOrganization({ organizationId });
    for (const query of [locked.query, `?userID=${userId}&orgID=${organizationId}&code=${code}`]) {
      const shown = await get(`${PATH}${query}`);
      expect(shown.status).toBe(403);
      expect(await shown.text()).toContain("This account cannot be used right now");
    }
  });
});

describe("the pages' log", () => {
  it("has one line per page request with the path and never the query, so no code is ever logged", async () => {
    const user = await newUser();
    const shown = await get(`${PATH}${user.query}`);
    const token = tokenIn(await shown.text())!;
    const wrong = (user.code[0] === "A" ? "B" : "A") + user.code.slice(1);
    const refused = await post({ userID: user.userId, orgID: user.orgId, code: wrong, token });
    expect(refused.status).toBe(400);
    const done = await post({ userID: user.userId, orgID: user.orgId, code: user.code, token });
    expect(done.status).toBe(200);
    const lines = t.server.logs.parsed();
    for (const [response, method, status] of [[shown, "GET", 200], [refused, "POST", 400], [done, "POST", 200]] as const) {
      const requestId = response.headers.get("x-request-id");
      const own = lines.filter((line) => line["requestId"] === requestId);
      expect(own).toEqual([expect.objectContaining({ msg: "page", method, path: PATH, status, durationMs: expect.any(Number) })]);
      expect(Object.keys(own[0]!)).not.toContain("query");
    }
    for (const secret of [user.code, wrong, token]) expect(t.server.logs.text).not.toContain(secret);
    expect(t.server.logs.text).not.toContain("code=");
  });
});

describe("the set-password page over HTTP", () => {
  const INIT = "/ui/login/user/init";
  const PASSWORD = "Correct-Horse-7";

  async function invited() {
    const email = `invited-${++n}@example.com`;
    const { userId } = await users().createHumanUser({ userName: `invited-${n}`, profile: { firstName: "In", lastName: "Vited" }, email: { email } });
    const mail = (await lastMailTo(t.server, email))!;
    const link = new URL(/https:\/\/\S+\/ui\/login\/user\/init\?\S+/.exec(mail.text)![0]);
    const page = await get(`${INIT}${link.search}`);
    const token = tokenIn(await page.text())!;
    return { userId, orgId: link.searchParams.get("orgID")!, code: link.searchParams.get("code")!, query: link.search, page, token };
  }
  const fields = (user: Awaited<ReturnType<typeof invited>>, over: Record<string, string> = {}) => ({ userID: user.userId, orgID: user.orgId, code: user.code, token: user.token, password: PASSWORD, confirmation: PASSWORD, ...over });
  const initialized = async (userId: string) => (await users().getUser({ userId })).user?.state === UserState.ACTIVE;

  it("carries the page headers, and refuses cross-site posts, foreign tokens and oversized passwords before trying the code", async () => {
    const user = await invited();
    expect(user.page.status).toBe(200);
    expectPageHeaders(user.page);
    const other = await invited();
    const refused: [string, Promise<Response>, number][] = [
      ["cross-site", post(fields(user), { origin: "https://evil.example", "sec-fetch-site": "cross-site" }, INIT), 403],
      ["another user's token", post(fields(user, { token: other.token }), undefined, INIT), 403],
      ["the verification form's token", post(fields(user, { token: await tokenFor({ query: user.query }) }), undefined, INIT), 403],
      ["a password of 1025 characters", post(fields(user, { password: `Aa1!${"x".repeat(1021)}`, confirmation: `Aa1!${"x".repeat(1021)}` }), undefined, INIT), 400],
      ["no code", post(fields(user, { code: "" }), undefined, INIT), 400],
    ];
    for (const [what, response, status] of refused) {
      const answer = await response;
      expect(answer.status, what).toBe(status);
      expectPageHeaders(answer);
    }
    expect(await initialized(user.userId)).toBe(false);
    expect((await events().listEvents({ aggregateId: user.userId })).events.filter((e) => e.eventType === "user.initialization.failed")).toEqual([]);
    const done = await post(fields(user), undefined, INIT);
    expect(done.status).toBe(200);
    expect(await initialized(user.userId)).toBe(true);
  });

  it("has no page for a user never invited to set a password, and needs the code in the link", async () => {
    const user = await invited();
    expect((await get(`${INIT}?userID=${user.userId}&orgID=${user.orgId}`)).status).toBe(400);
    const { userId } = await users().createHumanUser({ userName: `with-password-${++n}`, profile: { firstName: "Has", lastName: "One" }, email: { email: `pw-${n}@example.com`, isEmailVerified: true }, password: "Sup3r-secret!" });
    const answer = await get(`${INIT}?userID=${userId}&orgID=${user.orgId}&code=ABCDEF`);
    expect(answer.status).toBe(200);
    expect(await answer.text()).toContain("Your account has a password already.");
    // A user who signs in at an IDP has no password and no invitation: no page, and no way to ask for one.
    const { idpId } = await t.clients
      .client(IdentityProviderService, "connect-json-http1", { token: t.server.adminToken })
      .createIdentityProvider({ name: `SSO ${n}`, issuer: "https://sso.example.com", clientId: "gatehouse", clientSecret: "s3cret-value" });
    const { userId: brokered } = await users().createHumanUser({ userName: `brokered-${n}`, profile: { firstName: "Bro", lastName: "Kered" }, email: { email: `sso-${n}@example.com`, isEmailVerified: true }, idps: [{ configId: idpId, externalUserId: `ext-${n}`, displayName: "" }] });
    const shown = await get(`${INIT}?userID=${brokered}&orgID=${user.orgId}&code=ABCDEF`);
    expect(shown.status).toBe(404);
    const token = formToken(t.server.gatehouse.deps.masterKey, "init", brokered, undefined);
    const asked = await post({ userID: brokered, orgID: user.orgId, token, intent: "new_code" }, undefined, INIT);
    expect(asked.status).toBe(404);
    expect(await asked.text()).toContain("This link does not work");
    expect((await queuedMails(t.server)).filter((mail) => mail.recipient === `sso-${n}@example.com`)).toEqual([]);
  });

  it("never logs the password or the code", async () => {
    const user = await invited();
    const wrong = (user.code[0] === "A" ? "B" : "A") + user.code.slice(1);
    expect((await post(fields(user, { code: wrong }), undefined, INIT)).status).toBe(400);
    expect((await post(fields(user, { password: "weak", confirmation: "weak" }), undefined, INIT)).status).toBe(400);
    expect((await post(fields(user), undefined, INIT)).status).toBe(200);
    for (const secret of [PASSWORD, "weak", user.code, wrong, user.token]) expect(t.server.logs.text).not.toContain(secret);
    expect(t.server.logs.parsed().filter((line) => line["msg"] === "page" && line["path"] === INIT).map((line) => line["status"])).toEqual(expect.arrayContaining([200, 400, 400, 200]));
  });
});
