import type { ContextValues } from "@connectrpc/connect";
import type { UniversalServerRequest } from "@connectrpc/connect/protocol";
import { getEventListeners } from "node:events";
import type { IncomingMessage } from "node:http";
import type { Http2ServerRequest } from "node:http2";

type NodeRequest = IncomingMessage | Http2ServerRequest;
/** What is read of either protocol's response (connect-node's adapter types narrow node's own response types). */
type NodeResponse = Pick<NodeJS.EventEmitter, "once"> & { readonly writableEnded: boolean };

/**
 * How many request signals wait for their next call. A call takes one and gives it back when its answer was sent in
 * full, so this only needs to cover the calls in flight at once; past it, a signal is left to the collector.
 */
const IDLE_SIGNALS = 256;

/**
 * The controllers of request signals that were never aborted and whose calls are over.
 *
 * Why: connect-es links every call's context signal to its request's signal, and connect-node's request adapter makes
 * a new AbortController for every request and aborts it when the response closes, also after a normal finish. On
 * Node 20 an AbortSignal is dear to make (an EventTarget whose prototype is replaced: about 1.4 KB, of which a third
 * outlives the young generation), and each abort dispatches an event nobody listens to any more. A signal whose call
 * answered in full has no listener left (connect-es aborts the call's context when the call ends, which removes its
 * listener from the request's signal), so the next call can take it.
 */
const idle: AbortController[] = [];

function takeController(): AbortController {
  return idle.pop() ?? new AbortController();
}

/**
 * Ties a request's controller to its exchange, which ends when the exchange closes: the response's close over
 * HTTP/1.1 (Node closes a request once its body was read, nodejs/node#40775), the request's over HTTP/2 (the stream's
 * close; node's compatibility layer skips the response's for a HEAD stream reset before its end). The controller is
 * aborted when the client went away before the answer was complete — the connection closed, the stream was reset (also
 * by the body deadline), the request's body broke off — and given back when the answer was ended.
 */
function watchExchange(req: NodeRequest, res: NodeResponse, controller: AbortController): void {
  ("stream" in req ? req : res).once("close", () => {
    // Ended: the transport writes the end of an answer only after its call is over (connect-es aborted the call's own
    // signal, which took its listener off this one). Checked all the same: a signal something still listens to is
    // aborted, as connect-node would, never handed to another call.
    if (res.writableEnded && !req.errored && getEventListeners(controller.signal, "abort").length === 0) {
      if (idle.length < IDLE_SIGNALS) idle.push(controller);
      return;
    }
    // A body that broke off gives the reason: node's own error (ECONNRESET "aborted"; connect-node wrapped it in a
    // ConnectError, and the call ends as canceled either way). Node sets it before the exchange closes, and emits the
    // request's "error" only to a listener, so none is needed.
    controller.abort(req.errored ?? undefined);
  });
}

/** The request's headers as fetch Headers, without HTTP/2's pseudo-headers (what connect-node hands connect-es). */
function webHeaders(nodeHeaders: NodeRequest["headers"]): Headers {
  const header = new Headers();
  for (const key of Object.keys(nodeHeaders)) {
    if (key.startsWith(":")) continue;
    const value = nodeHeaders[key];
    // Node joins a repeated header into one value, except those it keeps as a list (set-cookie).
    if (typeof value === "string") header.append(key, value);
    else for (const item of value ?? []) header.append(key, item);
  }
  return header;
}

/** The request's body, chunk by chunk (a generator, so that leaving it early ends the read as connect-node's does). */
async function* bodyOf(req: NodeRequest): AsyncGenerator<Uint8Array> {
  for await (const chunk of req) yield chunk as Uint8Array;
}

/**
 * The request as connect-es takes it: what connect-node's `universalRequestFromNodeRequest` makes, with a request
 * signal that is reused (see `idle`), and a URL joined from `host` — the request's authority as a URL parser reads it,
 * which the node adapter's authority check keeps for the authorities it saw — and the request's path, instead of
 * parsed and printed again on every call.
 */
export function universalRequestOf(req: NodeRequest, res: NodeResponse, host: string, contextValues: ContextValues): UniversalServerRequest {
  const controller = takeController();
  watchExchange(req, res, controller);
  const encrypted = (req.socket as { encrypted?: boolean }).encrypted === true;
  return {
    httpVersion: req.httpVersion,
    // Stryker disable next-line StringLiteral: a server's request always has a method and a URL (optional only in their types)
    method: req.method ?? "",
    // Stryker disable next-line StringLiteral: as above
    url: `${encrypted ? "https" : "http"}://${host}${req.url ?? ""}`,
    header: webHeaders(req.headers),
    body: bodyOf(req),
    signal: controller.signal,
    contextValues,
  };
}

/** How many authorities already found valid are remembered: clients send the same few Host headers again and again. */
const KNOWN_AUTHORITIES = 64;

/**
 * The host of the request's authority as a URL parser reads it (lower-cased, decoded, a path or query cut off, as
 * connect-node's `new URL(path, "http://" + authority)` read it), which the request URL is joined from; undefined when
 * no URL can be built from the authority. Parsing a URL is one of the dearer steps of a cheap call, so the authorities
 * seen lately are remembered with their hosts (a bounded map, emptied when full: a client sending many different ones
 * only makes it parse again).
 */
export function createAuthorityCheck() {
  const known = new Map<string, string>();
  return (req: NodeRequest): string | undefined => {
    const authority = "authority" in req ? (req as Http2ServerRequest).authority : (req as IncomingMessage).headers.host;
    if (!authority) return undefined;
    const remembered = known.get(authority);
    // Stryker disable next-line ConditionalExpression: parsing again finds the same host (only slower)
    if (remembered !== undefined) return remembered;
    const host = URL.parse(`http://${authority}/`)?.host;
    // Stryker disable next-line ConditionalExpression: its `false` mutant remembers an unparsable authority as undefined, which reads as not remembered: the same answer
    if (host === undefined) return undefined;
    // Stryker disable next-line ConditionalExpression,EqualityOperator: only how much is remembered changes (memory, not answers)
    if (known.size >= KNOWN_AUTHORITIES) known.clear();
    // Stryker disable next-line all: remembering nothing only makes every call parse again
    known.set(authority, host);
    return host;
  };
}
