import { describe, expect, it } from "vitest";
import { initializationMail, verificationMail } from "../../src/notify/templates.js";

/**
 * The user mails (src/notify/templates.ts, API.md "Codes": init 72 h, email 1 h): each has a subject
 * naming the organization, says how long its code is valid, gives every link a label in the HTML
 * part, and tells a reader who did not ask for it that it can be ignored.
 */
const context = {
  externalUrl: "https://iam.example.com",
  organizationName: "Example Org",
  organizationId: "org-1",
  userId: "user-1",
  userName: "ada",
  displayName: "Ada Lovelace",
};
const linkLabels = (html: string) => [...html.matchAll(/<a href="[^"]+">([^<]*)<\/a>/g)].map((m) => m[1]);

describe("the initialization mail", () => {
  it("with an init code: says the password link is valid for 72 hours, and labels it", () => {
    const mail = initializationMail(context, { initCode: "ABC123" });
    expect(mail.text).toMatch(/72 hours/);
    expect(mail.html).toMatch(/72 hours/);
    const labels = linkLabels(mail.html);
    expect(labels).toHaveLength(1);
    expect(labels[0]?.trim()).not.toBe("");
    expect(mail.text).toContain("https://iam.example.com/ui/login/user/init?");
    expect(mail.subject).toContain("Example Org");
  });
});

describe("the verification mail", () => {
  it("has a subject naming the organization, the code valid for one hour, and says it can be ignored", () => {
    const mail = verificationMail(context, "XYZ789");
    expect(mail.subject).toContain("Example Org");
    expect(mail.text).toMatch(/one hour/);
    expect(mail.text).toContain("    XYZ789");
    expect(mail.text).toMatch(/ignore/);
    expect(mail.html).toMatch(/ignore/);
  });
});
