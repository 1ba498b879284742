import { describe, expect, it } from "vitest";
import { initializationMail, verificationMail } from "../../src/notify/templates.js";

/**
 * What a mail's recipient reads (src/notify/templates.ts; API.md "Codes": the email code is valid for
 * one hour, the init code for 72 hours). The text part: the greeting, then each paragraph with its code
 * indented on a line of its own and its link on the next, a blank line between them, and the
 * organization's sign-off. The HTML part is a complete document that says the same, escapes every
 * user-supplied value, and labels every link. The verification link carries userID, orgID and code.
 */
const context = (overrides: Partial<Parameters<typeof verificationMail>[0]> = {}) => ({
  externalUrl: "https://iam.example.com",
  organizationName: "Example Org",
  organizationId: "org-7",
  userId: "user-7",
  userName: "ada",
  displayName: "Ada Lovelace",
  ...overrides,
});

const ENTITIES: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'" };
/** The character an HTML character reference stands for (named or numeric). */
const decode = (html: string) =>
  html.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (whole, ref: string) =>
    ref.startsWith("#x") || ref.startsWith("#X")
      ? String.fromCodePoint(parseInt(ref.slice(2), 16))
      : ref.startsWith("#")
        ? String.fromCodePoint(Number(ref.slice(1)))
        : (ENTITIES[ref.toLowerCase()] ?? whole),
  );
/** What a mail reader shows of the HTML part: the text of its paragraphs, one paragraph a line. */
const shown = (html: string) =>
  decode(
    html
      .replace(/<br>/g, " ")
      .replace(/<\/p>/g, "\n")
      .replace(/<[^>]*>/g, ""),
  )
    .split("\n")
    .map((line) => line.replace(/\s+/g, " ").trim())
    .filter((line) => line !== "");
const hrefs = (html: string) => [...html.matchAll(/<a href="([^"]*)">/g)].map((m) => decode(m[1]!));
const labels = (html: string) => [...html.matchAll(/<a href="[^"]*">([^<]*)<\/a>/g)].map((m) => decode(m[1]!).trim());

describe("the text part", () => {
  it("of the verification mail: greeting, the sentence, the code alone on its line, the link, the hint, the sign-off", () => {
    const mail = verificationMail(context(), "XYZ789");
    const link = "https://iam.example.com/ui/login/mail/verification?userID=user-7&orgID=org-7&code=XYZ789";
    expect(mail.text.split("\n")).toEqual([
      "Hello Ada Lovelace,",
      "",
      "Confirm your email address with this code (valid for one hour):",
      "    XYZ789",
      link,
      "",
      "If you did not ask for this, you can ignore this mail.",
      "",
      "— Example Org",
    ]);
  });

  it("of the initialization mail: the account it is about, the code, the password link, the hint, the sign-off", () => {
    const mail = initializationMail(context(), { emailCode: "EMAIL1", initCode: "INIT22" });
    expect(mail.text.split("\n")).toEqual([
      "Hello Ada Lovelace,",
      "",
      'An account "ada" was created for you at Example Org.',
      "",
      "Confirm your email address with this code (valid for one hour):",
      "    EMAIL1",
      "https://iam.example.com/ui/login/mail/verification?userID=user-7&orgID=org-7&code=EMAIL1",
      "",
      "Set your password here (valid for 72 hours):",
      "https://iam.example.com/ui/login/user/init?userID=user-7&orgID=org-7&code=INIT22",
      "",
      "If you did not expect this mail, you can ignore it.",
      "",
      "— Example Org",
    ]);
  });
});

describe("the verification link", () => {
  it("leads to the login UI's verification page with the user, the organization and the code", () => {
    for (const mail of [verificationMail(context(), "CODE42"), initializationMail(context(), { emailCode: "CODE42" })]) {
      const [href] = hrefs(mail.html);
      const url = new URL(href!);
      expect(url.origin).toBe("https://iam.example.com");
      expect(url.pathname).toBe("/ui/login/mail/verification");
      expect(Object.fromEntries(url.searchParams)).toEqual({ userID: "user-7", orgID: "org-7", code: "CODE42" });
      expect(mail.text).toContain(url.toString());
    }
  });
});

describe("the HTML part", () => {
  it("is a complete HTML document whose paragraphs are all closed", () => {
    for (const mail of [verificationMail(context(), "XYZ789"), initializationMail(context(), { emailCode: "E1", initCode: "I2" }), initializationMail(context(), {})]) {
      expect(mail.html).toMatch(/^<!doctype html><html><body[^>]*>/i);
      expect(mail.html.trimEnd()).toMatch(/<\/body><\/html>$/);
      const opened = mail.html.match(/<p>/g)?.length ?? 0;
      expect(opened).toBeGreaterThan(0);
      expect(mail.html.match(/<\/p>/g)?.length).toBe(opened);
    }
  });

  it("of the verification mail shows what the text part says, with the code and a labeled link, and nothing else", () => {
    const mail = verificationMail(context(), "XYZ789");
    expect(shown(mail.html)).toEqual([
      "Hello Ada Lovelace,",
      "Confirm your email address with this code (valid for one hour): XYZ789 Verify my email address",
      "If you did not ask for this, you can ignore this mail.",
      "— Example Org",
    ]);
    expect(labels(mail.html)).toEqual(["Verify my email address"]);
  });

  it("of the initialization mail names the account, and says the mail can be ignored", () => {
    const mail = initializationMail(context(), { initCode: "INIT22" });
    const lines = shown(mail.html);
    expect(lines[1]).toBe('An account "ada" was created for you at Example Org.');
    expect(lines).toContain("If you did not expect this mail, you can ignore it.");
    expect(mail.text).toContain("If you did not expect this mail, you can ignore it.");
  });

  it("escapes every user-supplied value: what the reader sees is the value as it was given", () => {
    const hostile = { displayName: `Tom & "Jerry" O'Neil <b>`, userName: `o'neil&"co"`, organizationName: `R&D "Labs" <it's>` };
    const mail = initializationMail(context(hostile), { emailCode: "C0DE" });
    const lines = shown(mail.html);
    expect(lines[0]).toBe(`Hello ${hostile.displayName},`);
    expect(lines[1]).toBe(`An account "${hostile.userName}" was created for you at ${hostile.organizationName}.`);
    expect(lines.at(-1)).toBe(`— ${hostile.organizationName}`);
    // No raw markup character of a value reaches the HTML: every & starts a character reference, and no
    // quote or angle bracket of the values is left outside the document's own tags and attributes.
    const body = mail.html.replace(/<(\/?[a-z]+|!doctype html)( [a-z]+="[^"]*")?>/gi, "");
    expect(body).not.toMatch(/[<>"']/);
    expect(body).not.toMatch(/&(?!(#\d+|#x[0-9a-f]+|[a-z]+);)/i);
  });
});
