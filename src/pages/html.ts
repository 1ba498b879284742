/** Text for HTML, in element content and in double-quoted attribute values alike. */
export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);
}

/** A piece of markup that is already safe: only these functions make one, from escaped text. */
export interface Html {
  readonly html: string;
}

const markup = (html: string): Html => ({ html });

/** Joins escaped text and markup: strings are escaped, Html is taken as it is. */
export function html(strings: TemplateStringsArray, ...values: (string | number | Html | Html[] | undefined | false)[]): Html {
  let out = strings[0]!;
  values.forEach((value, i) => {
    out += render(value) + strings[i + 1]!;
  });
  return markup(out);
}

function render(value: string | number | Html | Html[] | undefined | false): string {
  if (value === undefined || value === false) return "";
  if (Array.isArray(value)) return value.map((part) => part.html).join("");
  if (typeof value === "object") return value.html;
  return escapeHtml(String(value));
}

export interface PageContent {
  /** The heading, also the start of the document title. */
  title: string;
  /** The organization whose user the link is for; absent when the link names none that can be shown. */
  organizationName?: string | undefined;
  body: Html;
}

/**
 * A whole page: English (`lang`), scaled for phones, the served stylesheet linked relatively (every page is two
 * levels under /ui/login/, so `../assets/` finds it behind a proxy's path prefix too), no script. The organization's
 * name is shown above the heading so the user sees who sent the mail.
 */
export function renderPage(content: PageContent): string {
  const title = content.organizationName ? `${content.title} — ${content.organizationName}` : content.title;
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title>
<link rel="stylesheet" href="../assets/pages.css">
</head>
<body>
<main>
${content.organizationName ? html`<p class="organization">${content.organizationName}</p>` : ""}
<h1>${content.title}</h1>
${content.body}
</main>
</body>
</html>
`.html;
}

/** A message box; errors are announced to screen readers as soon as the page loads (role="alert"). */
export function message(kind: "error" | "success" | "info", ...paragraphs: string[]): Html {
  const role = kind === "error" ? ' role="alert"' : "";
  return markup(`<div class="message ${kind}" id="message"${role}>${paragraphs.map((p) => `<p>${escapeHtml(p)}</p>`).join("")}</div>`);
}
