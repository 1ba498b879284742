import type { connectNodeAdapter } from "@connectrpc/connect-node";
import { constants as http2Constants, Http2ServerRequest } from "node:http2";
import type { Deps } from "../context.js";
import { DomainError } from "../domain/errors.js";
import { accessLogOf, type Logger } from "../support/logger.js";
import { isSameOriginPost } from "./form-guard.js";
import { html, message, renderPage } from "./html.js";
import type { PageAnswer } from "./page-answer.js";
import { BadPageInput, FormAbandoned, queryOf, readForm } from "./page-input.js";
import { SECURITY_HEADERS } from "./security-headers.js";
import { STYLESHEET, STYLESHEET_PATH } from "./stylesheet.js";
import { INIT_PATH, showInit, submitInit } from "./init-page.js";
import { showVerification, submitVerification, VERIFICATION_PATH } from "./verification-page.js";

type NodeHandler = ReturnType<typeof connectNodeAdapter>;
type Request = Parameters<NodeHandler>[0];
type Response = Parameters<NodeHandler>[1];

const isHttp2 = (req: Request): req is Http2ServerRequest => req instanceof Http2ServerRequest;

/**
 * Sends a page. A form that took too long (408) over HTTP/2 is still being trickled in: its stream is closed behind the
 * answer (RST_STREAM, no error, sent after it), so the client cannot keep it by sending on. Over HTTP/1.1 node's own
 * request timeout, which started with the request, answers such a client and closes its connection.
 */
function writePage(req: Request, res: Response, answered: PageAnswer): void {
  res.writeHead(answered.status, { ...SECURITY_HEADERS, ...answered.headers, "content-type": "text/html; charset=utf-8" });
  res.end(renderPage(answered.page));
  if (answered.status === 408 && isHttp2(req)) req.stream.close(http2Constants.NGHTTP2_NO_ERROR);
}

/** Answers a request when its path is one of the pages (true), or leaves it to the next handler (false). */
export type PageHandler = (req: Request, res: Response, requestId: string) => boolean;

/** Everything under this prefix is a page for a person with a browser: answered in HTML, with the page headers. */
export const PAGES_PREFIX = "/ui/login/";

interface PageRoute {
  show(deps: Deps, query: URLSearchParams): Promise<PageAnswer>;
  submit(deps: Deps, form: URLSearchParams): Promise<PageAnswer>;
}

const ROUTES = new Map<string, PageRoute>([
  [VERIFICATION_PATH, { show: showVerification, submit: submitVerification }],
  [INIT_PATH, { show: showInit, submit: submitInit }],
]);

/**
 * The path as the log may keep it: a page's own path, and for any other path under the prefix only the prefix. An
 * unknown path can hold a code too: a mail client or a "safe links" scanner that encodes the link's `?` as `%3F` turns
 * the whole query into path, and that request is still the link holder's.
 */
function loggedPath(path: string): string {
  return ROUTES.has(path) || path === STYLESHEET_PATH ? path : `${PAGES_PREFIX}…`;
}

const page = (status: number, title: string, ...paragraphs: string[]): PageAnswer => ({ status, page: { title, body: html`${message("error", ...paragraphs)}` } });

const LINK_INVALID = page(404, "This link does not work", "The link is not valid, or the account it was made for can no longer use it.", "Open the link again from the newest mail, or ask your administrator to send a new one.");
const ON_HOLD = page(403, "This account cannot be used right now", "Your administrator has put this account on hold. Please contact them.");
const CROSS_SITE = page(403, "This form was not sent from this site", "Nothing was done. Open the link from your mail and use the form there.");
const UNAVAILABLE = page(503, "Please try again", "The service is busy right now. Please try again in a moment.");
const NO_SUCH_PAGE = page(404, "This page does not exist", "Check the link in your mail: open it again, or copy the whole link into the address bar.");

export interface PageOptions {
  /** How long a form post may take to arrive (GATEHOUSE_REQUEST_TIMEOUT_MS, as for a whole unary request). */
  formTimeoutMs?: number;
}

/** The request timeout's default (config.ts). */
const DEFAULT_FORM_TIMEOUT_MS = 60_000;

/**
 * The hosted pages the mails link to (`/ui/login/…`): server-rendered HTML, no script, on the one port. Every answer
 * carries the page headers (security-headers.ts); posts must come from Gatehouse's own pages (form-guard.ts). One
 * log line per request, like the RPCs' — with the path only (a known page's; see loggedPath): a page's query holds the
 * link's code, the credential.
 */
export function createPages(deps: Deps, logger: Logger, options: PageOptions = {}): PageHandler {
  const formTimeoutMs = options.formTimeoutMs ?? DEFAULT_FORM_TIMEOUT_MS;
  const accessLog = accessLogOf(logger);
  const externalOrigin = new URL(deps.externalUrl).origin;

  async function answer(req: Request, path: string): Promise<PageAnswer | "stylesheet"> {
    const route = ROUTES.get(path);
    const reads = req.method === "GET" || req.method === "HEAD";
    if (path === STYLESHEET_PATH && reads) return "stylesheet";
    if (!route) return NO_SUCH_PAGE;
    if (reads) return route.show(deps, queryOf(req));
    if (req.method !== "POST") return { ...page(405, "This page cannot do that", "Open the link from your mail again."), headers: { allow: "GET, HEAD, POST" } };
    // Before the body is read: a forged post costs nothing but this answer.
    if (!isSameOriginPost(req.headers, externalOrigin)) return CROSS_SITE;
    const answered = await route.submit(deps, await readForm(req, formTimeoutMs));
    // What the answer says (verified, a new code sent) must survive a crash before the person reads it.
    await deps.store.durable();
    return answered;
  }

  function failed(error: unknown, requestId: string, path: string): PageAnswer {
    if (error instanceof BadPageInput) {
      return page(error.status, error.status === 400 ? "This link does not work" : "The form could not be read", error.problem);
    }
    if (error instanceof DomainError) {
      if (error.reason === "link.invalid") return LINK_INVALID;
      // The holds authentication refuses a token for, and initializeUserWithCode's own check of them (a hold put on the
      // account while the page was open).
      if (error.kind === "unauthenticated" || error.reason === "user.inactive" || error.reason === "user.locked") return ON_HOLD;
      if (error.kind === "unavailable" || error.kind === "resource_exhausted") return UNAVAILABLE;
    }
    // Like every unexpected error: the cause goes to the log under the request id, never to the page.
    logger.error({ requestId, err: error, path: loggedPath(path) }, "internal error in a page");
    return page(500, "Something went wrong", "Please try again later.", `If it keeps happening, tell your administrator this reference: ${requestId}`);
  }

  return (req, res, requestId) => {
    // Stryker disable next-line OptionalChaining: node gives every request it serves a url
    const path = (req.url ?? "").split("?", 1)[0]!;
    if (!path.startsWith(PAGES_PREFIX)) return false;
    const started = process.hrtime.bigint();
    void answer(req, path)
      .catch((error: unknown) => (error instanceof FormAbandoned ? undefined : failed(error, requestId, path)))
      .then((answered) => {
        // The client hung up mid-form: nobody is left to answer (logged as nginx does, 499).
        if (answered === undefined) res.destroy();
        else if (answered === "stylesheet") {
          res.writeHead(200, { ...SECURITY_HEADERS, "content-type": "text/css; charset=utf-8" });
          res.end(STYLESHEET);
        } else {
          writePage(req, res, answered);
        }
        const status = answered === undefined ? 499 : answered === "stylesheet" ? 200 : answered.status;
        const durationMs = Math.round(Number(process.hrtime.bigint() - started) / 1e3) / 1e3;
        // The path, never the query: `code=` is the link's credential.
        accessLog.info({ requestId, method: req.method, path: loggedPath(path), status, durationMs }, "page");
      })
      .catch((error: unknown) => logger.warn({ requestId, path: loggedPath(path), err: error }, "page not delivered"));
    return true;
  };
}
