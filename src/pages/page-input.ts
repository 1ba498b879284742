import type { IncomingMessage } from "node:http";
import type { Http2ServerRequest } from "node:http2";

export type PageRequest = IncomingMessage | Http2ServerRequest;

/** The most a form post may carry: a 1024-character password and its confirmation, percent-encoded, fit with room. */
export const MAX_FORM_BYTES = 16_384;

/** Input no page can be made of: answered with a page of its status that says so, never a 500. */
export class BadPageInput extends Error {
  constructor(
    readonly status: 400 | 408 | 413 | 415,
    readonly problem: string,
  ) {
    super(problem);
  }
}

/** The client hung up before its form was complete: nobody is left to answer. */
export class FormAbandoned extends Error {}

/**
 * A form post's fields (application/x-www-form-urlencoded, at most MAX_FORM_BYTES), arrived within `timeoutMs`. The
 * deadline is the pages' own: node bounds a whole HTTP/1.1 request in time, but over HTTP/2 it only drops a stream on
 * which nothing moved for a while, so a client trickling a byte now and then could hold a post open for days.
 */
export async function readForm(req: PageRequest, timeoutMs: number): Promise<URLSearchParams> {
  const type = (req.headers["content-type"] ?? "").split(";")[0]!.trim().toLowerCase();
  if (type !== "application/x-www-form-urlencoded") throw new BadPageInput(415, "The form was sent in a way this page does not understand.");
  const declared = Number(req.headers["content-length"] ?? "0");
  if (declared > MAX_FORM_BYTES) throw new BadPageInput(413, "The form was too large.");
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new BadPageInput(408, "The form took too long to arrive. Please send it again.")), timeoutMs);
  });
  // Left unfinished when the deadline wins: the request is dropped once the answer is out (pages.ts).
  const chunks = req.iterator({ destroyOnReturn: false });
  const parts: Buffer[] = [];
  let size = 0;
  try {
    for (;;) {
      const next = (await Promise.race([chunks.next(), deadline])) as IteratorResult<Buffer>;
      if (next.done) break;
      size += next.value.length;
      if (size > MAX_FORM_BYTES) throw new BadPageInput(413, "The form was too large.");
      parts.push(next.value);
    }
  } catch (error) {
    if (!(error instanceof BadPageInput) && !req.complete) throw new FormAbandoned();
    throw error;
  } finally {
    clearTimeout(timer);
  }
  return new URLSearchParams(Buffer.concat(parts).toString("utf8"));
}

/** The query of a request's URL. */
export function queryOf(req: PageRequest): URLSearchParams {
  // Stryker disable next-line OptionalChaining: node gives every request it serves a url
  const url = req.url ?? "";
  const at = url.indexOf("?");
  return new URLSearchParams(at === -1 ? "" : url.slice(at + 1));
}

const ID = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * One value of a field, sent at most once; a second one makes the input ambiguous, which is refused. U+0000 is refused
 * in every value, as the API refuses it in every request text (rule string.no_nul): a password set here with it could
 * never be checked by VerifyPassword, which the transport refuses it to.
 */
function single(fields: URLSearchParams, name: string): string | undefined {
  const values = fields.getAll(name);
  if (values.length > 1) throw new BadPageInput(400, "The link or form is damaged: a value was sent twice.");
  if (values[0]?.includes("\0")) throw new BadPageInput(400, "A value in the link or form holds a character that cannot be used (NUL).");
  return values[0];
}

/** The user and organization a link or form names: both required, each an id (at most 64 letters, digits, - or _). */
export function linkIds(fields: URLSearchParams): { userId: string; orgId: string } {
  const userId = single(fields, "userID");
  const orgId = single(fields, "orgID");
  if (userId === undefined || orgId === undefined || !ID.test(userId) || !ID.test(orgId)) {
    throw new BadPageInput(400, "The link is incomplete or damaged. Open it again from the mail, or copy the whole link into the address bar.");
  }
  return { userId, orgId };
}

/** The code field: surrounding blanks dropped, at most `maxChars` (the SPEC's verification code limit is 20). */
export function codeField(fields: URLSearchParams, maxChars = 20): string {
  const code = (single(fields, "code") ?? "").trim();
  if ([...code].length > maxChars) throw new BadPageInput(400, "The code is too long: codes from Gatehouse have 6 characters.");
  return code;
}

/** A text field of a form, at most `maxChars` characters; absent is empty. */
export function textField(fields: URLSearchParams, name: string, maxChars: number): string {
  const value = single(fields, name) ?? "";
  if ([...value].length > maxChars) throw new BadPageInput(400, "A value in the form was too long.");
  return value;
}
