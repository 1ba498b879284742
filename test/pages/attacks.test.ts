import { request as httpRequest } from "node:http";
import { connect as http2Connect } from "node:http2";
import { connect as netConnect } from "node:net";
import { describe, expect, it } from "vitest";
import { EventService } from "../../gen/gatehouse/admin/v1/event_pb.js";
import { OrganizationService } from "../../gen/gatehouse/admin/v1/organization_pb.js";
import { UserService, UserState } from "../../gen/gatehouse/admin/v1/user_pb.js";
import { MAX_FORM_BYTES } from "../../src/pages/page-input.js";
import { errorShape } from "../support/errors.js";
import { emailCodeIn, lastMailTo, queuedMails } from "../support/outbox.js";
import { startTestServer, useTestServer } from "../support/server.js";
import { interleavedDeps } from "../commands/rules-support.js";
import { resolveLinkHolder } from "../../src/access/link-holder.js";
import { requestNewCode } from "../../src/commands/request-new-code.js";
import { DomainError } from "../../src/domain/errors.js";

/**
 * An attacker's look at the hosted pages, over HTTP against a real server. Each test is a rule the pages must keep
 * against someone who knows a user's ids (they are in the link, and user ids travel in tokens and events) but not the
 * code the mail carried: forged posts, guessing the code, reading it from logs and headers, the new-code button as a
 * mail bomb, hostile input, and what the set-password page lets a link holder do.
 */
const EXTERNAL = "https://iam.example.com";
const t = useTestServer({ config: { externalUrl: EXTERNAL } });
const VERIFY = "/ui/login/mail/verification";
const INIT = "/ui/login/user/init";
const PASSWORD = "Correct-Horse-7";
/** The headers a browser sends with a form post from the page itself (Origin null under no-referrer). */
const OWN_PAGE = { origin: "null", "sec-fetch-site": "same-origin" };
let n = 0;

const admin = () => ({ token: t.server.adminToken });
const users = () => t.clients.client(UserService, "connect-json-http1", admin());
const events = () => t.clients.client(EventService, "connect-json-http1", admin());

const get = (pathAndQuery: string, init: RequestInit = {}) => fetch(`${t.server.url}${pathAndQuery}`, { redirect: "manual", ...init });
const post = (path: string, fields: Record<string, string> | string, headers: Record<string, string> = OWN_PAGE) =>
  fetch(`${t.server.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
    body: typeof fields === "string" ? fields : new URLSearchParams(fields),
    redirect: "manual",
  });
const tokenIn = (page: string) => /name="token" value="([^"]+)"/.exec(page)?.[1];
const wrong = (code: string) => (code[0] === "A" ? "B" : "A") + code.slice(1);

/** A user with a password and an unverified email: the verification mail's link, and the page's token as a browser gets it. */
async function verifying(email = `attack-${++n}@example.com`) {
  const { userId } = await users().createHumanUser({ userName: `attack-${n}`, profile: { firstName: "Vic", lastName: "Tim" }, email: { email }, password: "Sup3r-secret!" });
  const mail = (await lastMailTo(t.server, email))!;
  const link = new URL(/https:\/\/\S+verification\?\S+/.exec(mail.text)![0]);
  const orgId = link.searchParams.get("orgID")!;
  const user = { userId, email, orgId, code: emailCodeIn(mail)!, query: link.search, ids: { userID: userId, orgID: orgId } };
  return { ...user, token: await verificationToken(user) };
}

/** A user invited without a password: the set-password link of the initialization mail (and its email code). */
async function invited(email = `invited-${++n}@example.com`, userName = `invited-${n}`) {
  const { userId } = await users().createHumanUser({ userName, profile: { firstName: "In", lastName: "Vited" }, email: { email } });
  const mail = (await lastMailTo(t.server, email))!;
  const link = new URL(/https:\/\/\S+\/ui\/login\/user\/init\?\S+/.exec(mail.text)![0]);
  const orgId = link.searchParams.get("orgID")!;
  const page = await get(`${INIT}${link.search}`);
  const token = tokenIn(await page.text())!;
  return { userId, email, orgId, code: link.searchParams.get("code")!, emailCode: emailCodeIn(mail), query: link.search, token, ids: { userID: userId, orgID: orgId } };
}

async function verificationToken(user: { userId: string; orgId: string }): Promise<string> {
  const token = tokenIn(await (await get(`${VERIFY}?userID=${user.userId}&orgID=${user.orgId}`)).text());
  if (!token) throw new Error("the verification page has a form token");
  return token;
}

const eventsOf = async (userId: string, type: string) => (await events().listEvents({ aggregateId: userId })).events.filter((e) => e.eventType === type);
const verified = async (userId: string) => {
  const { user } = await users().getUser({ userId });
  return user?.type.case === "human" ? user.type.value.email?.isEmailVerified : undefined;
};
const mailsTo = async (email: string) => (await queuedMails(t.server)).filter((mail) => mail.recipient === email);
/** Whether `password` signs the user in (VerifyPassword, as the admin, who holds user.password.check). */
async function signsIn(userId: string, password: string): Promise<boolean> {
  try {
    await users().verifyPassword({ user: { case: "userId", value: userId }, password });
    return true;
  } catch (error) {
    if (errorShape(error).reason === "password.invalid") return false;
    throw error;
  }
}

/** A post over a raw HTTP/1.1 request, for headers fetch will not send (repeated ones, Transfer-Encoding games). */
function rawPost(path: string, headers: Record<string, string | string[]>, body: string): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; text: string }> {
  const url = new URL(t.server.url);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: url.hostname, port: url.port, path, method: "POST", headers }, (res) => {
      // A body shorter than its Content-Length never ends: the answer's head is what there is to see.
      if (headers["content-length"] !== undefined) {
        resolve({ status: res.statusCode!, headers: res.headers, text: "" });
        req.destroy();
        return;
      }
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => (text += chunk));
      res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, text }));
    });
    req.on("error", (error) => (req.destroyed ? undefined : reject(error)));
    req.end(body);
  });
}

describe("forged posts (CSRF)", () => {
  it("only a post whose browser headers name the external origin gets past: every other Origin / Sec-Fetch-Site combination is refused before the code is tried", async () => {
    const user = await verifying();
    const fields = { ...user.ids, code: wrong(user.code), token: user.token, intent: "verify" };
    const refused: Record<string, string>[] = [
      { origin: "https://evil.example" },
      { origin: "https://evil.example", "sec-fetch-site": "same-origin" },
      { origin: "null" },
      { origin: "null", "sec-fetch-site": "cross-site" },
      { origin: "null", "sec-fetch-site": "same-site" },
      { origin: "null", "sec-fetch-site": "none" },
      { "sec-fetch-site": "cross-site" },
      { "sec-fetch-site": "same-site" },
      { "sec-fetch-site": "none" },
      { "sec-fetch-site": "SAME-ORIGIN" },
      // Another port, another scheme, a sibling or parent host of the external URL: each another origin.
      { origin: "https://iam.example.com:8443", "sec-fetch-site": "same-site" },
      { origin: "https://iam.example.com:8443" },
      { origin: "http://iam.example.com" },
      { origin: "https://evil.iam.example.com" },
      { origin: "https://example.com" },
      { origin: "https://iam.example.com.evil.example" },
      { origin: "https://iam.example.com/" },
      { origin: "HTTPS://IAM.EXAMPLE.COM" },
      // Browsers serialize an origin without its default port: a spelling no browser sends is not trusted either.
      { origin: "https://iam.example.com:443" },
      { origin: "" },
      // The address the server was reached at is not its origin: the external URL is.
      { origin: t.server.url, "sec-fetch-site": "same-origin" },
    ];
    for (const headers of refused) {
      const answer = await post(VERIFY, fields, headers);
      expect(answer.status, JSON.stringify(headers)).toBe(403);
      expect(await answer.text()).toContain("This form was not sent from this site");
    }
    // Headers sent twice are joined by node ("null, https://evil.example"): never one that passes.
    const repeated: Record<string, string | string[]>[] = [{ origin: ["null", "https://evil.example"], "sec-fetch-site": "same-origin" }, { origin: "null", "sec-fetch-site": ["same-origin", "cross-site"] }, { origin: [EXTERNAL, EXTERNAL] }];
    for (const headers of repeated) {
      const answer = await rawPost(VERIFY, { "content-type": "application/x-www-form-urlencoded", ...headers }, new URLSearchParams(fields).toString());
      expect(answer.status, JSON.stringify(headers)).toBe(403);
    }
    expect(await eventsOf(user.userId, "user.email.verification.failed")).toEqual([]);
    // What does pass: the page's own post (Origin null, same-origin), the external origin itself, and a client
    // without browser headers (curl) — the last two each spend an attempt, as the code is wrong.
    for (const headers of [OWN_PAGE, { origin: EXTERNAL, "sec-fetch-site": "same-origin" }, {}]) {
      expect((await post(VERIFY, fields, headers)).status, JSON.stringify(headers)).toBe(400);
    }
    expect(await eventsOf(user.userId, "user.email.verification.failed")).toHaveLength(3);
  });

  it("a form token works only for the user, the form and the code it was rendered for, and dies with its code", async () => {
    const victim = await verifying();
    const other = await verifying();
    const init = await invited();
    const fields = { ...victim.ids, code: victim.code, intent: "verify" };
    const foreign: [string, string][] = [
      ["another user's token", other.token],
      ["the init form's token of another user", init.token],
      ["a token with a character changed", `${victim.token.slice(0, -1)}${victim.token.endsWith("A") ? "B" : "A"}`],
      ["a token cut short", victim.token.slice(0, 20)],
      ["a token twice as long", victim.token + victim.token],
    ];
    for (const [what, token] of foreign) {
      const answer = await post(VERIFY, { ...fields, token });
      expect(answer.status, what).toBe(403);
      expect(await answer.text(), what).toContain("This page is out of date");
    }
    expect(await verified(victim.userId)).toBe(false);
    // The init form of the victim's own link on the verification form: refused, and the other way round too.
    const victimInit = await invited();
    const initAsVerify = await post(VERIFY, { ...victimInit.ids, code: victimInit.emailCode!, token: victimInit.token, intent: "verify" });
    expect(initAsVerify.status).toBe(403);
    const verifyToken = await verificationToken(victimInit);
    const verifyAsInit = await post(INIT, { ...victimInit.ids, code: victimInit.code, token: verifyToken, password: PASSWORD, confirmation: PASSWORD, intent: "set_password" });
    expect(verifyAsInit.status).toBe(403);
    expect(await signsIn(victimInit.userId, PASSWORD)).toBe(false);
    // A token of the code before a new one was sent (the admin resent it): refused, even with the new code.
    const { verificationCode } = await users().resendEmailCode({ userId: victim.userId, returnCode: true });
    expect((await post(VERIFY, { ...victim.ids, code: verificationCode!, token: victim.token, intent: "verify" })).status).toBe(403);
    expect(await verified(victim.userId)).toBe(false);
    expect(await eventsOf(victim.userId, "user.email.verification.failed")).toEqual([]);
  });

  it("a GET or HEAD changes nothing, whatever its query says: no attempt, no new code, no password", async () => {
    const user = await verifying();
    const init = await invited();
    const asForm = (fields: Record<string, string>) => `?${new URLSearchParams(fields)}`;
    for (const method of ["GET", "HEAD"]) {
      await get(`${VERIFY}${asForm({ ...user.ids, code: wrong(user.code), token: user.token, intent: "verify" })}`, { method });
      await get(`${VERIFY}${asForm({ ...user.ids, code: user.code, token: user.token, intent: "verify" })}`, { method });
      await get(`${VERIFY}${asForm({ ...user.ids, token: user.token, intent: "new_code" })}`, { method });
      await get(`${INIT}${asForm({ ...init.ids, code: init.code, token: init.token, password: PASSWORD, confirmation: PASSWORD, intent: "set_password" })}`, { method });
      await get(`${INIT}${asForm({ ...init.ids, code: wrong(init.code), token: init.token, intent: "new_code" })}`, { method });
    }
    expect(await verified(user.userId)).toBe(false);
    expect(await eventsOf(user.userId, "user.email.verification.failed")).toEqual([]);
    expect(await eventsOf(init.userId, "user.initialization.failed")).toEqual([]);
    expect(await signsIn(init.userId, PASSWORD)).toBe(false);
    expect(await mailsTo(user.email)).toHaveLength(1);
    expect(await mailsTo(init.email)).toHaveLength(1);
  });
});

describe("the code as the credential", () => {
  it("the page and VerifyEmail share one attempt count: 3 wrong on the page and 2 by RPC use the code up, and the right code no longer works anywhere", async () => {
    const user = await verifying();
    for (let i = 0; i < 3; i++) expect((await post(VERIFY, { ...user.ids, code: wrong(user.code), token: user.token, intent: "verify" })).status).toBe(400);
    for (let i = 0; i < 2; i++) {
      const refused = await users()
        .verifyEmail({ userId: user.userId, verificationCode: wrong(user.code) })
        .then(() => undefined, errorShape);
      expect(refused?.reason).toBe("email_code.invalid");
    }
    const page = await post(VERIFY, { ...user.ids, code: user.code, token: user.token, intent: "verify" });
    expect(page.status).toBe(410);
    expect(await page.text()).toContain("entered wrongly too many times");
    const rpc = await users()
      .verifyEmail({ userId: user.userId, verificationCode: user.code })
      .then(() => undefined, errorShape);
    expect(rpc?.reason).toBe("email_code.exhausted");
    expect(await verified(user.userId)).toBe(false);
    expect(await eventsOf(user.userId, "user.email.verification.failed")).toHaveLength(5);
  });

  it("of 40 wrong guesses sent at once, half on the page and half by RPC, at most 5 are judged; the right code comes too late", async () => {
    const user = await verifying();
    const guesses = Array.from({ length: 20 }, (_, i) => `G${String(i).padStart(5, "0")}`);
    const answers = await Promise.all([
      ...guesses.map((guess) => post(VERIFY, { ...user.ids, code: guess, token: user.token, intent: "verify" }).then((r) => r.status)),
      ...guesses.map((guess) =>
        users()
          .verifyEmail({ userId: user.userId, verificationCode: guess })
          .then(() => "ok", (error: unknown) => errorShape(error).reason),
      ),
    ]);
    expect(answers).not.toContain(200);
    expect(answers).not.toContain("ok");
    expect(answers.filter((a) => a === 400 || a === "email_code.invalid").length).toBeLessThanOrEqual(5);
    expect(await eventsOf(user.userId, "user.email.verification.failed")).toHaveLength(5);
    expect((await post(VERIFY, { ...user.ids, code: user.code, token: user.token, intent: "verify" })).status).toBe(410);
    expect(await verified(user.userId)).toBe(false);
  });

  it("the init code: 5 wrong attempts on the set-password page, and the right code sets no password", async () => {
    const user = await invited();
    const fields = { ...user.ids, token: user.token, password: PASSWORD, confirmation: PASSWORD, intent: "set_password" };
    const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => post(INIT, { ...fields, code: `W${String(i).padStart(5, "0")}` }).then((r) => r.status)));
    expect(answers.filter((status) => status === 400).length).toBeLessThanOrEqual(5);
    expect(await eventsOf(user.userId, "user.initialization.failed")).toHaveLength(5);
    expect((await post(INIT, { ...fields, code: user.code })).status).toBe(410);
    expect(await signsIn(user.userId, PASSWORD)).toBe(false);
  });

  it("the link's code never reaches the log: not for HEAD, 405, 413, 415, 400, an unknown page, or a link whose ? a mail client encoded", async () => {
    const user = await verifying();
    const query = `?userID=${user.userId}&orgID=${user.orgId}&code=${user.code}`;
    const encodedQuery = `%3FuserID%3D${user.userId}%26orgID%3D${user.orgId}%26code%3D${user.code}`;
    const answers: [string, Promise<{ status: number }>][] = [
      ["HEAD", get(`${VERIFY}${query}`, { method: "HEAD" })],
      ["PUT", get(`${VERIFY}${query}`, { method: "PUT", body: `code=${user.code}` })],
      ["DELETE", get(`${VERIFY}${query}`, { method: "DELETE" })],
      ["OPTIONS", get(`${VERIFY}${query}`, { method: "OPTIONS" })],
      ["post with the code in the query", post(`${VERIFY}${query}`, { code: "X" })],
      ["post over 16 KiB", post(`${VERIFY}${query}`, { ...user.ids, code: user.code, filler: "x".repeat(MAX_FORM_BYTES) })],
      ["post as JSON", post(VERIFY, JSON.stringify({ code: user.code }), { ...OWN_PAGE, "content-type": "application/json" })],
      ["repeated code", get(`${VERIFY}${query}&code=${user.code}`)],
      ["code too long", get(`${VERIFY}${query}${"9".repeat(20)}`)],
      ["the ? encoded", get(`${VERIFY}${encodedQuery}`)],
      ["the ? encoded, init page", get(`${INIT}${encodedQuery}`)],
      ["path parameters", get(`${VERIFY};code=${user.code}`)],
      ["a longer path", get(`${VERIFY}/${user.code}`)],
      ["the code as a path", get(`/ui/login/${user.code}`)],
    ];
    for (const [what, answer] of answers) expect((await answer).status, what).toBeGreaterThanOrEqual(200);
    expect(t.server.logs.lines.filter((line) => line.includes(user.code))).toEqual([]);
  });

  it("no answer points anywhere with the code: no Location, no link, no form action, and the page asks for no referrer and no storing", async () => {
    const user = await verifying();
    const answers = [
      await get(`${VERIFY}${user.query}`),
      await post(VERIFY, { ...user.ids, code: wrong(user.code), token: user.token, intent: "verify" }),
      await post(VERIFY, { ...user.ids, code: user.code, token: user.token, intent: "verify" }),
    ];
    for (const answer of answers) {
      expect(answer.headers.get("location")).toBeNull();
      expect(answer.headers.get("referrer-policy")).toBe("no-referrer");
      expect(answer.headers.get("cache-control")).toBe("no-store");
      const page = await answer.text();
      for (const url of [...page.matchAll(/(?:href|action|src)="([^"]*)"/g)].map((m) => m[1]!)) expect(url.toUpperCase()).not.toContain(user.code);
    }
  });
});

describe("the new-code button", () => {
  /** Spends the user's email code with five wrong guesses on the page, so a new one may be asked for. */
  async function exhausted(user: Awaited<ReturnType<typeof verifying>>) {
    const token = await verificationToken(user);
    for (let i = 0; i < 5; i++) await post(VERIFY, { ...user.ids, code: wrong(user.code), token, intent: "verify" });
    return { ...user, token };
  }
  const newCode = (path: string, user: { ids: Record<string, string>; token: string }) => post(path, { ...user.ids, token: user.token, intent: "new_code" });

  it("cannot take a working code from its owner: refused while the code works, and the owner's link still verifies", async () => {
    const user = await verifying();
    const answers = await Promise.all(Array.from({ length: 10 }, () => newCode(VERIFY, user).then((r) => r.status)));
    expect(answers.every((status) => status === 200)).toBe(true);
    expect(await mailsTo(user.email)).toHaveLength(1);
    expect((await post(VERIFY, { ...user.ids, code: user.code, token: user.token, intent: "verify" })).status).toBe(200);
    expect(await verified(user.userId)).toBe(true);
  });

  it("20 presses at once mail one new code, not more", async () => {
    const user = await exhausted(await verifying());
    t.server.clock.advance(61_000);
    const answers = await Promise.all(Array.from({ length: 20 }, () => newCode(VERIFY, user).then((r) => r.status)));
    // The others are too soon (429), or find the page's token outdated by the new code (403).
    expect(answers.filter((status) => status === 200)).toHaveLength(1);
    expect(answers.filter((status) => status !== 200 && status !== 429 && status !== 403)).toEqual([]);
    expect(await mailsTo(user.email)).toHaveLength(2);
  });

  it("presses on both pages at once (the email code and the init code) mail one code between them", async () => {
    const user = await invited();
    // Both of the user's codes used up by wrong guesses: each page offers a new code.
    const verifyToken = await verificationToken(user);
    for (let i = 0; i < 5; i++) {
      await post(VERIFY, { ...user.ids, code: wrong(user.emailCode!), token: verifyToken, intent: "verify" });
      await post(INIT, { ...user.ids, code: wrong(user.code), token: user.token, password: PASSWORD, confirmation: PASSWORD, intent: "set_password" });
    }
    const tokens = { verify: await verificationToken(user), init: tokenIn(await (await get(`${INIT}${user.query}`)).text())! };
    t.server.clock.advance(61_000);
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) => (i % 2 ? newCode(VERIFY, { ids: user.ids, token: tokens.verify }) : newCode(INIT, { ids: user.ids, token: tokens.init })).then((r) => r.status)),
    );
    expect(answers.filter((status) => status === 200)).toHaveLength(1);
    expect(await mailsTo(user.email)).toHaveLength(2);
  });

  it("holds a minute between mails and five an hour, counting every code mail, however the codes die", async () => {
    const user = await verifying();
    let current = user;
    const sent: number[] = [];
    for (let round = 0; round < 7; round++) {
      t.server.clock.advance(61_000);
      current = await exhausted(current);
      const first = await newCode(VERIFY, current);
      sent.push(first.status);
      if (first.status === 429) {
        expect(Number(first.headers.get("retry-after"))).toBeGreaterThan(0);
      } else {
        const mail = (await lastMailTo(t.server, user.email))!;
        current = { ...current, code: emailCodeIn(mail)! };
      }
    }
    // The creation mail and four new codes make five in the hour; the sixth and seventh wait for the window.
    expect(sent).toEqual([200, 200, 200, 200, 429, 429, 429]);
    expect(await mailsTo(user.email)).toHaveLength(5);
  });

  it("a link's orgID cannot be changed to reach a user of another organization, and a machine user has no button", async () => {
    const user = await exhausted(await verifying());
    const organizations = t.clients.client(OrganizationService, "connect-json-http1", admin());
    const { organizationId } = await organizations.createOrganization({ name: `Elsewhere ${++n}` });
    const answer = await post(VERIFY, { userID: user.userId, orgID: organizationId, token: user.token, intent: "new_code" });
    expect(answer.status).toBe(404);
    const { userId: machine } = await users().createMachineUser({ userName: `robot-${n}`, name: "Robot" });
    expect((await post(VERIFY, { userID: machine, orgID: user.orgId, token: user.token, intent: "new_code" })).status).toBe(404);
    expect(await mailsTo(user.email)).toHaveLength(1);
  });
});

describe("hostile input", () => {
  it("is a 4xx page, never a 500, and only a well-formed entry spends an attempt: arrays, thousands of fields, NUL bytes, unicode, broken % escapes, content-type tricks", async () => {
    const user = await verifying();
    const ids = `userID=${user.userId}&orgID=${user.orgId}`;
    const base = `${ids}&token=${user.token}`;
    const cases: [string, () => Promise<Response>, number, "judged" | "not judged"][] = [
      ["userID as an array", () => post(VERIFY, `userID[]=${user.userId}&orgID=${user.orgId}&token=${user.token}&code=${user.code}`), 400, "not judged"],
      ["userID twice", () => post(VERIFY, `${base}&userID=${user.userId}&code=${user.code}`), 400, "not judged"],
      ["token twice", () => post(VERIFY, `${base}&token=${user.token}&code=${user.code}`), 400, "not judged"],
      ["intent twice", () => post(VERIFY, `${base}&code=${user.code}&intent=verify&intent=new_code`), 400, "not judged"],
      ["3000 unknown fields", () => post(VERIFY, `${base}${"&a=1".repeat(3000)}&code=${wrong(user.code)}`), 400, "judged"],
      ["a NUL in the userID", () => post(VERIFY, `userID=${user.userId}%00&orgID=${user.orgId}&token=${user.token}&code=x`), 400, "not judged"],
      ["a NUL in the token", () => post(VERIFY, `${ids}&token=${user.token}%00&code=x`), 400, "not judged"],
      ["a NUL in the code", () => post(VERIFY, `${base}&code=${wrong(user.code)}%00`), 400, "not judged"],
      ["a Cyrillic look-alike in the userID", () => post(VERIFY, `userID=%D0%B0${user.userId.slice(1)}&orgID=${user.orgId}&token=${user.token}&code=x`), 400, "not judged"],
      ["a code of 21 emoji", () => post(VERIFY, `${base}&code=${"%F0%9F%98%80".repeat(21)}`), 400, "not judged"],
      ["a broken % escape in the userID", () => post(VERIFY, `userID=%E0%A4%A&orgID=${user.orgId}&token=${user.token}`), 400, "not judged"],
      ["a lone surrogate", () => post(VERIFY, `${base}&code=%ED%A0%80`), 400, "judged"],
      ["JSON", () => post(VERIFY, JSON.stringify({ userID: user.userId, orgID: user.orgId, token: user.token, code: user.code }), { ...OWN_PAGE, "content-type": "application/json" }), 415, "not judged"],
      ["text/plain (a cross-site form's other type)", () => post(VERIFY, `${base}&code=${user.code}`, { ...OWN_PAGE, "content-type": "text/plain" }), 415, "not judged"],
      ["multipart", () => post(VERIFY, `--b\r\ncontent-disposition: form-data; name="code"\r\n\r\n${user.code}\r\n--b--`, { ...OWN_PAGE, "content-type": "multipart/form-data; boundary=b" }), 415, "not judged"],
      ["a form type with parameters and capitals", () => post(VERIFY, `${base}&code=${wrong(user.code)}`, { ...OWN_PAGE, "content-type": "Application/X-WWW-Form-Urlencoded; charset=ISO-8859-1" }), 400, "judged"],
    ];
    let judged = 0;
    for (const [what, send, status, judgement] of cases) {
      const answer = await send();
      expect(answer.status, what).toBe(status);
      expect(answer.headers.get("content-security-policy"), what).toContain("default-src 'none'");
      if (judgement === "judged") judged++;
      expect(await eventsOf(user.userId, "user.email.verification.failed"), what).toHaveLength(judged);
    }
    // A body declared larger than allowed is refused before a byte of it is read.
    const declared = await rawPost(VERIFY, { "content-type": "application/x-www-form-urlencoded", ...OWN_PAGE, "content-length": "999999999" }, `${base}&code=x`);
    expect(declared.status).toBe(413);
    expect(declared.headers["content-security-policy"]).toContain("default-src 'none'");
    // Only well-formed posts with a wrong code were judged (a lone surrogate is a wrong code like any other); the right
    // code still works, also among 5000 empty fields.
    expect((await post(VERIFY, `${base}&code=${user.code}${"&".repeat(5000)}`)).status).toBe(200);
    expect(await verified(user.userId)).toBe(true);
  });

  it("a body sent in pieces is read in pieces up to 16 KiB: a chunked body over the limit is 413 before it ends", async () => {
    const user = await verifying();
    const url = new URL(t.server.url);
    const status = await new Promise<number>((resolve, reject) => {
      const req = httpRequest({ host: url.hostname, port: url.port, path: VERIFY, method: "POST", headers: { "content-type": "application/x-www-form-urlencoded", ...OWN_PAGE, "transfer-encoding": "chunked" } }, (res) => {
        res.resume();
        resolve(res.statusCode!);
        req.destroy();
      });
      req.on("error", (error) => (req.destroyed ? undefined : reject(error)));
      req.write(`userID=${user.userId}&orgID=${user.orgId}&filler=`);
      // 64 KiB in 1 KiB chunks; the answer comes once 16 KiB are in, without waiting for the end.
      let sent = 0;
      const more = () => {
        if (req.destroyed || sent >= 64) return;
        sent++;
        req.write("x".repeat(1024), () => setImmediate(more));
      };
      more();
    });
    expect(status).toBe(413);
    expect(await eventsOf(user.userId, "user.email.verification.failed")).toEqual([]);
  });

  it("a slow body is cut off: a form trickled in over HTTP/1.1 or HTTP/2 gets no more time than the request timeout", async () => {
    const server = await startTestServer({ config: { externalUrl: EXTERNAL, requestTimeoutMs: 1_500, headersTimeoutMs: 1_000 } });
    try {
      // HTTP/2 (h2c, prior knowledge): one byte every 300 ms keeps the stream from ever being idle.
      const started = Date.now();
      const session = http2Connect(server.url);
      session.on("error", () => undefined);
      const outcome = await new Promise<{ status: string; closedAfterMs: number }>((resolve) => {
        let status = "none";
        const stream = session.request({ ":method": "POST", ":path": VERIFY, "content-type": "application/x-www-form-urlencoded", ...OWN_PAGE });
        stream.on("response", (headers) => (status = String(headers[":status"])));
        stream.resume();
        stream.on("error", () => undefined);
        const trickle = setInterval(() => (stream.destroyed ? undefined : stream.write("a")), 300);
        const give = setTimeout(() => stream.destroy(), 8_000);
        stream.on("close", () => {
          clearInterval(trickle);
          clearTimeout(give);
          resolve({ status, closedAfterMs: Date.now() - started });
        });
      });
      session.destroy();
      expect(outcome.status).toBe("408");
      // Answered and dropped at the deadline, though the client went on sending.
      expect(outcome.closedAfterMs).toBeLessThan(5_000);

      // HTTP/1.1: node's own request timeout answers 408 and closes.
      const port = Number(new URL(server.url).port);
      const http1 = await new Promise<{ received: string; ms: number }>((resolve) => {
        const at = Date.now();
        const socket = netConnect(port, "127.0.0.1", () => socket.write(`POST ${VERIFY} HTTP/1.1\r\nHost: x\r\nOrigin: null\r\nSec-Fetch-Site: same-origin\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 5000\r\n\r\n`));
        let received = "";
        const trickle = setInterval(() => (socket.destroyed ? undefined : socket.write("a")), 300);
        socket.on("data", (chunk) => (received += chunk.toString()));
        socket.on("error", () => undefined);
        const give = setTimeout(() => socket.destroy(), 8_000);
        socket.on("close", () => {
          clearInterval(trickle);
          clearTimeout(give);
          resolve({ received, ms: Date.now() - at });
        });
      });
      expect(http1.received).toMatch(/^HTTP\/1.1 408/);
      expect(http1.ms).toBeLessThan(5_000);
    } finally {
      await server.dispose();
    }
  });

  it("markup in the organization's name and the user's name is shown as text, in the page and its title", async () => {
    const hostile = `Evil"><img src=x onerror=alert(1)><script>alert(2)</script>'`;
    const organizations = t.clients.client(OrganizationService, "connect-json-http1", admin());
    const { organizationId } = await organizations.createOrganization({ name: `${hostile} ${++n}` });
    const inOrg = t.clients.client(UserService, "connect-json-http1", { ...admin(), orgId: organizationId });
    const email = `hostile-${n}@example.com`;
    const userName = `<b>x</b>"'-${n}`;
    const { userId } = await inOrg.createHumanUser({ userName, profile: { firstName: "<i>", lastName: "</i>" }, email: { email } });
    const mail = (await lastMailTo(t.server, email))!;
    const link = new URL(/https:\/\/\S+\/ui\/login\/user\/init\?\S+/.exec(mail.text)![0]);
    const shown = await (await get(`${INIT}${link.search}`)).text();
    const token = tokenIn(shown)!;
    const done = await (await post(INIT, { userID: userId, orgID: organizationId, code: link.searchParams.get("code")!, token, password: PASSWORD, confirmation: PASSWORD, intent: "set_password" })).text();
    expect(done).toContain("Your password is set.");
    for (const page of [shown, done]) {
      expect(page).not.toMatch(/<img|<script|<b>|<i>|onerror=alert\(1\)>/);
      expect(page).toContain("Evil&quot;&gt;&lt;img src=x onerror=alert(1)&gt;&lt;script&gt;");
    }
    expect(done).toContain("&lt;b&gt;x&lt;/b&gt;&quot;&#39;");
  });
});

describe("the headers of every answer", () => {
  it("HEAD, 404, 405 (also OPTIONS), 410, 413, 415, 429 and the stylesheet carry CSP, frame-ancestors, nosniff, no-store and no-referrer", async () => {
    const user = await verifying();
    for (let i = 0; i < 5; i++) await post(VERIFY, { ...user.ids, code: wrong(user.code), token: user.token, intent: "verify" });
    t.server.clock.advance(61_000);
    const token = await verificationToken(user);
    await post(VERIFY, { ...user.ids, token, intent: "new_code" });
    const fresh = await verifying();
    for (let i = 0; i < 5; i++) await post(VERIFY, { ...fresh.ids, code: wrong(fresh.code), token: fresh.token, intent: "verify" });
    const answers: [string, Response, number][] = [
      ["HEAD", await get(`${VERIFY}${user.query}`, { method: "HEAD" }), 200],
      ["unknown page", await get("/ui/login/nothing"), 404],
      ["OPTIONS", await get(VERIFY, { method: "OPTIONS" }), 405],
      ["PATCH", await get(VERIFY, { method: "PATCH" }), 405],
      ["POST to the stylesheet", await post("/ui/login/assets/pages.css", "a=1"), 404],
      ["dead code", await get(`${VERIFY}${fresh.query}`), 410],
      ["too large", await post(VERIFY, { filler: "x".repeat(MAX_FORM_BYTES + 1) }), 413],
      ["not a form", await post(VERIFY, "{}", { ...OWN_PAGE, "content-type": "application/json" }), 415],
      ["too soon", await post(VERIFY, { ...fresh.ids, token: await verificationToken(fresh), intent: "new_code" }), 429],
      ["stylesheet", await get("/ui/login/assets/pages.css"), 200],
    ];
    for (const [what, answer, status] of answers) {
      expect(answer.status, what).toBe(status);
      expect(answer.headers.get("content-security-policy"), what).toBe("default-src 'none'; style-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'");
      expect(answer.headers.get("x-frame-options"), what).toBe("DENY");
      expect(answer.headers.get("x-content-type-options"), what).toBe("nosniff");
      expect(answer.headers.get("cache-control"), what).toBe("no-store");
      expect(answer.headers.get("referrer-policy"), what).toBe("no-referrer");
      expect(answer.headers.get("set-cookie"), what).toBeNull();
    }
  });
});

describe("the set-password page as a way in", () => {
  const setPassword = (user: Awaited<ReturnType<typeof invited>>, over: Record<string, string> = {}) =>
    post(INIT, { ...user.ids, code: user.code, token: user.token, password: PASSWORD, confirmation: PASSWORD, intent: "set_password", ...over });

  it("refuses a password with a NUL (the API refuses U+0000 in every text, so VerifyPassword could never check it): 400, nothing set, no attempt spent", async () => {
    const user = await invited();
    const nul = `${PASSWORD}\0`;
    const answer = await setPassword(user, { password: nul, confirmation: nul });
    expect(answer.status).toBe(400);
    expect(await eventsOf(user.userId, "user.initialized")).toEqual([]);
    expect(await eventsOf(user.userId, "user.initialization.failed")).toEqual([]);
    expect((await setPassword(user)).status).toBe(200);
    expect(await signsIn(user.userId, PASSWORD)).toBe(true);
  });

  it("cannot replace a password: set by an admin after the invitation, or by the link itself before", async () => {
    const user = await invited();
    await users().setPassword({ userId: user.userId, password: "Admin-Chosen-1", changeRequired: true });
    // SetPassword voided the init code, and with it the page's token: nothing is tried.
    const answer = await setPassword(user);
    expect(answer.status).toBe(403);
    expect(await answer.text()).toContain("nothing was done");
    const reopened = await get(`${INIT}${user.query}`);
    expect(await reopened.text()).toContain("Your account has a password already");
    expect(await signsIn(user.userId, PASSWORD)).toBe(false);
    expect(await signsIn(user.userId, "Admin-Chosen-1")).toBe(true);
    expect(await eventsOf(user.userId, "user.initialized")).toEqual([]);
    // Used once, the link sets nothing a second time, with another password either.
    const once = await invited();
    expect((await setPassword(once)).status).toBe(200);
    const again = await setPassword(once, { password: "Second-Try-99", confirmation: "Second-Try-99" });
    expect(await again.text()).toContain("Your account has a password already");
    expect(await signsIn(once.userId, "Second-Try-99")).toBe(false);
    expect(await signsIn(once.userId, PASSWORD)).toBe(true);
  });

  it("is closed to a locked or deactivated user and to a machine user, without trying the code", async () => {
    const locked = await invited();
    await users().lockUser({ userId: locked.userId });
    const inactive = await invited();
    await users().deactivateUser({ userId: inactive.userId });
    for (const user of [locked, inactive]) {
      const shown = await get(`${INIT}${user.query}`);
      expect(shown.status).toBe(403);
      const answer = await setPassword(user);
      expect(answer.status).toBe(403);
      expect(await answer.text()).toContain("This account cannot be used right now");
      expect((await post(INIT, { ...user.ids, token: user.token, intent: "new_code" })).status).toBe(403);
    }
    await users().unlockUser({ userId: locked.userId });
    await users().reactivateUser({ userId: inactive.userId });
    for (const user of [locked, inactive]) {
      expect(await eventsOf(user.userId, "user.initialization.failed")).toEqual([]);
      expect(await signsIn(user.userId, PASSWORD)).toBe(false);
      expect(await mailsTo(user.email)).toHaveLength(1);
    }
    const { userId: machine } = await users().createMachineUser({ userName: `machine-${++n}`, name: "Machine" });
    expect((await post(INIT, { userID: machine, orgID: locked.orgId, code: locked.code, token: locked.token, password: PASSWORD, confirmation: PASSWORD, intent: "set_password" })).status).toBe(404);
  });

  it("takes only the init code: the email code of the same mail is a wrong attempt on the init page, and the init code one on the verification page", async () => {
    const user = await invited();
    const answer = await setPassword(user, { code: user.emailCode! });
    expect(answer.status).toBe(400);
    expect(await answer.text()).toContain("4 attempts are");
    expect(await signsIn(user.userId, PASSWORD)).toBe(false);
    const asEmailCode = await post(VERIFY, { ...user.ids, code: user.code, token: await verificationToken(user), intent: "verify" });
    expect(asEmailCode.status).toBe(400);
    expect(await verified(user.userId)).toBe(false);
    // Both codes still work for what they are.
    expect((await setPassword(user)).status).toBe(200);
    expect(await signsIn(user.userId, PASSWORD)).toBe(true);
  });

  it("one's own code on another user's link sets nothing: it is a wrong guess at that user's code", async () => {
    const attacker = await invited();
    const victim = await invited();
    const answer = await post(INIT, { ...victim.ids, code: attacker.code, token: victim.token, password: PASSWORD, confirmation: PASSWORD, intent: "set_password" });
    expect(answer.status).toBe(400);
    expect(await signsIn(victim.userId, PASSWORD)).toBe(false);
    expect(await signsIn(attacker.userId, PASSWORD)).toBe(false);
  });

  it("gives the link holder their own password and nothing more: no role, no change of name or email, no other user touched", async () => {
    const user = await invited();
    const before = (await users().getUser({ userId: user.userId })).user!;
    const done = await post(INIT, { ...user.ids, code: user.code, token: user.token, password: PASSWORD, confirmation: PASSWORD, intent: "set_password", userName: "admin", email: "attacker@evil.example", roles: "IAM_OWNER" });
    expect(done.status).toBe(200);
    const after = (await users().getUser({ userId: user.userId })).user!;
    expect(after.state).toBe(UserState.ACTIVE);
    expect(after.userName).toBe(before.userName);
    expect(after.type.case === "human" ? after.type.value.email?.email : undefined).toBe(user.email);
    expect((await eventsOf(user.userId, "user.initialized")).map((e) => e.actor)).toEqual([user.userId]);
    const types = new Set((await events().listEvents({ aggregateId: user.userId })).events.map((e) => e.eventType));
    expect([...types].filter((type) => !["user.human.added", "user.code.added", "user.notification.queued", "user.initialized", "user.email.verified"].includes(type))).toEqual([]);
  });
});

describe("the new-code limit against a request landing between its reads (in-process, the running server's store)", () => {
  /** A user whose email code is used up, a minute after its last mail: a new code may be mailed once. */
  async function ready() {
    const user = await verifying();
    for (let i = 0; i < 5; i++) await post(VERIFY, { ...user.ids, code: wrong(user.code), token: user.token, intent: "verify" });
    t.server.clock.advance(61_000);
    return { ...user, holder: await resolveLinkHolder(t.server.gatehouse.deps, { userId: user.userId, orgId: user.orgId }) };
  }
  const refusal = (call: Promise<unknown>) => call.then(() => "mailed", (error: unknown) => (error instanceof DomainError ? error.reason : String(error)));

  it.each(["aggregateSpan", "findUserById", "findCode", "listOutboxOfUser", "commit"] as const)("another press landing before this one's %s: one mail", async (step) => {
    const user = await ready();
    const deps = t.server.gatehouse.deps;
    const other = interleavedDeps(t, () => requestNewCode(deps, user.holder, "email"), step);
    expect(["code.resend_limited", "code.still_valid"]).toContain(await refusal(requestNewCode(other, user.holder, "email")));
    expect(await mailsTo(user.email)).toHaveLength(2);
  });

  it("an address changed after the page read the user: the new code goes to the new address, never the old one", async () => {
    const user = await invited();
    const token = user.token;
    for (let i = 0; i < 5; i++) await post(INIT, { ...user.ids, code: wrong(user.code), token, password: PASSWORD, confirmation: PASSWORD, intent: "set_password" });
    const holder = await resolveLinkHolder(t.server.gatehouse.deps, { userId: user.userId, orgId: user.orgId });
    const moved = `moved-${n}@example.com`;
    await users().setEmail({ userId: user.userId, email: moved, isVerified: true, returnCode: false });
    // SetEmail itself re-invites at the new address (the invitation follows the address), so the old page's request
    // finds a code that still works; nothing ever goes to the old address again.
    t.server.clock.advance(61_000);
    expect(await refusal(requestNewCode(t.server.gatehouse.deps, holder, "init"))).toBe("code.still_valid");
    expect(await mailsTo(user.email)).toHaveLength(1);
    expect((await mailsTo(moved)).map((mail) => mail.template)).toEqual(["user.initialization"]);
  });

  it("a user locked or removed after the page read it gets no new code", async () => {
    const locked = await ready();
    await users().lockUser({ userId: locked.userId });
    expect(await refusal(requestNewCode(t.server.gatehouse.deps, locked.holder, "email"))).toBe("user.locked");
    const removed = await ready();
    await users().removeUser({ userId: removed.userId });
    expect(await refusal(requestNewCode(t.server.gatehouse.deps, removed.holder, "email"))).toBe("link.invalid");
    expect(await mailsTo(locked.email)).toHaveLength(1);
    // RemoveUser took the user's mails out of the outbox; none came after.
    expect(await mailsTo(removed.email)).toEqual([]);
  });
});
