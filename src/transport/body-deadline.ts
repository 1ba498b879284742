import { constants, type Http2ServerRequest, type Http2ServerResponse } from "node:http2";

/**
 * A handler with a deadline of its own at the request timeout (the pages answer 408 in words) answers first; this is
 * the backstop for every other one.
 */
const GRACE_MS = 1_000;

/**
 * Gives an HTTP/2 request's body at most `timeoutMs` (plus a grace) to arrive; a stream still receiving it then is
 * reset (CANCEL).
 *
 * Over HTTP/1.1 node enforces the server's requestTimeout itself. Over HTTP/2 it only times out a session on which
 * nothing moves, so a client trickling a byte every few hundred milliseconds would hold a stream — and the handler
 * waiting for its one message — for as long as it likes, on as many streams as the session allows. Not for the
 * client- and bidirectional-streaming RPCs, whose body is a stream of messages that may rightly last (the caller
 * decides that: see the node adapter).
 */
export function limitBodyTime(req: Http2ServerRequest, res: Http2ServerResponse, timeoutMs: number): void {
  if (req.complete) return;
  const timer = setTimeout(() => {
    // Stryker disable next-line ConditionalExpression: a completed body cleared the timer already ("end" below); a guard
    if (!req.complete && !res.stream.destroyed) res.stream.close(constants.NGHTTP2_CANCEL);
  }, timeoutMs + GRACE_MS);
  const clear = () => clearTimeout(timer);
  req.once("end", clear);
  res.once("close", clear);
}
