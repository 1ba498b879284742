import { Code, ConnectError } from "@connectrpc/connect";

/**
 * How node reports a request body that stopped arriving because its connection went away: ECONNRESET ("aborted") over
 * HTTP/1.1, ERR_STREAM_PREMATURE_CLOSE for an HTTP/2 stream whose session closed (test/transport/hang-up-rules.test.ts).
 */
const GONE_CODES = new Set(["ECONNRESET", "ERR_STREAM_PREMATURE_CLOSE"]);

/**
 * A body whose read failed in the network (the client closed or reset its connection while sending it) ends its call
 * as canceled: the client went away, nothing the server did wrong — not an `internal` with a stack in the error log
 * for anyone to trigger. Any other failure is left as it is (a fault of the server: internal).
 */
export function clientWentAway(error: unknown): unknown {
  const code = (error as { code?: unknown } | undefined)?.code;
  if (typeof code !== "string" || !GONE_CODES.has(code)) return error;
  return new ConnectError("the client went away while sending its request", Code.Canceled, undefined, undefined, error);
}
