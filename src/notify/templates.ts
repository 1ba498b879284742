import { externalLink } from "../support/links.js";

/** A rendered mail: what the outbox stores and the delivery worker sends. */
export interface RenderedMail {
  subject: string;
  text: string;
  html: string;
}

const escapeHtml = (value: string) =>
  value.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);

interface Paragraph {
  text: string;
  code?: string;
  link?: { href: string; label: string };
}

function render(subject: string, greeting: string, paragraphs: Paragraph[], organizationName: string): RenderedMail {
  const text = [greeting, "", ...paragraphs.flatMap((p) => [p.text, ...(p.code ? [`    ${p.code}`] : []), ...(p.link ? [p.link.href] : []), ""]), `— ${organizationName}`].join("\n");
  const html = [
    `<!doctype html><html><body style="font-family: sans-serif">`,
    `<p>${escapeHtml(greeting)}</p>`,
    ...paragraphs.map(
      (p) =>
        `<p>${escapeHtml(p.text)}` +
        (p.code ? `<br><strong style="font-size: 1.4em; letter-spacing: 0.2em">${escapeHtml(p.code)}</strong>` : "") +
        (p.link ? `<br><a href="${escapeHtml(p.link.href)}">${escapeHtml(p.link.label)}</a>` : "") +
        `</p>`,
    ),
    `<p>— ${escapeHtml(organizationName)}</p>`,
    `</body></html>`,
    // Stryker disable next-line StringLiteral: presentation only: line breaks between block elements do not show in the rendered mail
  ].join("\n");
  return { subject, text, html };
}

export interface UserMailContext {
  externalUrl: string;
  organizationName: string;
  organizationId: string;
  userId: string;
  userName: string;
  displayName: string;
}

/** The email code and its link; the sentence before the code is what tests and users look for. */
function verificationParagraph(context: UserMailContext, emailCode: string): Paragraph {
  return {
    text: "Confirm your email address with this code (valid for one hour):",
    code: emailCode,
    link: {
      href: externalLink(context.externalUrl, "/ui/login/mail/verification", { userID: context.userId, orgID: context.organizationId, code: emailCode }),
      label: "Verify my email address",
    },
  };
}

/**
 * The initialization mail of a new user: an email verification code when the email is unverified,
 * and a link with an initialization code to set a password when the user has none.
 */
export function initializationMail(context: UserMailContext, codes: { emailCode?: string; initCode?: string }): RenderedMail {
  const paragraphs: Paragraph[] = [{ text: `An account "${context.userName}" was created for you at ${context.organizationName}.` }];
  if (codes.emailCode) paragraphs.push(verificationParagraph(context, codes.emailCode));
  if (codes.initCode) {
    paragraphs.push({
      text: "Set your password here (valid for 72 hours):",
      link: { href: externalLink(context.externalUrl, "/ui/login/user/init", { userID: context.userId, orgID: context.organizationId, code: codes.initCode }), label: "Set my password" },
    });
  }
  paragraphs.push({ text: "If you did not expect this mail, you can ignore it." });
  return render(`Your new account at ${context.organizationName}`, `Hello ${context.displayName},`, paragraphs, context.organizationName);
}

/** The email verification mail: a code and a link to confirm the address. */
export function verificationMail(context: UserMailContext, emailCode: string): RenderedMail {
  return render(
    `Verify your email address for ${context.organizationName}`,
    `Hello ${context.displayName},`,
    [verificationParagraph(context, emailCode), { text: "If you did not ask for this, you can ignore this mail." }],
    context.organizationName,
  );
}
