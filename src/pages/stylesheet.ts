/** Where the pages' one stylesheet is served (the pages link it relatively, so a path prefix of a proxy is kept). */
export const STYLESHEET_PATH = "/ui/login/assets/pages.css";

/**
 * The pages' look, served as a file so the CSP allows no inline style at all. System fonts, one column that fits a
 * phone, text and controls at least 4.5:1 against their background (WCAG AA), a focus ring nobody can miss, and
 * nothing that hides the focus or needs a pointer.
 */
export const STYLESHEET = `
*, *::before, *::after { box-sizing: border-box; }
html { font-family: system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", sans-serif; font-size: 100%; line-height: 1.5; color: #1b1b1f; background: #f3f4f6; }
body { margin: 0; padding: 1rem; }
main { max-width: 30rem; margin: 2rem auto; padding: 1.5rem; background: #ffffff; border: 1px solid #c4c7cc; border-radius: 0.5rem; }
.organization { margin: 0 0 0.25rem; font-size: 0.95rem; font-weight: 600; color: #3b3f45; }
h1 { margin: 0 0 1rem; font-size: 1.5rem; line-height: 1.25; }
p { margin: 0 0 1rem; }
label { display: block; margin: 1rem 0 0.25rem; font-weight: 600; }
input { display: block; width: 100%; padding: 0.6rem 0.75rem; font: inherit; font-size: 1.1rem; color: #1b1b1f; background: #ffffff; border: 2px solid #5f6368; border-radius: 0.375rem; }
input.code { letter-spacing: 0.2em; text-transform: uppercase; }
input[aria-invalid="true"] { border-color: #b3261e; }
.hint { margin: 0.25rem 0 0; font-size: 0.95rem; color: #3b3f45; }
ul.rules { margin: 0.25rem 0 0; padding-left: 1.25rem; font-size: 0.95rem; color: #3b3f45; }
button { display: block; width: 100%; margin-top: 1.5rem; padding: 0.75rem 1rem; font: inherit; font-weight: 600; color: #ffffff; background: #1a4fd1; border: 2px solid #1a4fd1; border-radius: 0.375rem; cursor: pointer; }
button:hover { background: #143fa8; border-color: #143fa8; }
button.secondary { color: #1a4fd1; background: #ffffff; }
:focus-visible { outline: 3px solid #b35c00; outline-offset: 2px; }
.message { margin: 0 0 1rem; padding: 0.75rem 1rem; border-radius: 0.375rem; border-left: 0.4rem solid; }
.message.error { color: #8c1d18; background: #fdecea; border-color: #b3261e; }
.message.success { color: #0f5223; background: #e6f4ea; border-color: #1e7e34; }
.message.info { color: #1b1b1f; background: #eef2fb; border-color: #1a4fd1; }
.message p:last-child, main > :last-child { margin-bottom: 0; }
footer { max-width: 30rem; margin: 0 auto; font-size: 0.85rem; color: #3b3f45; text-align: center; }
`.trimStart();
