import { connect } from "node:net";

/** One call's answer: its HTTP status and body. */
export interface Http1Answer {
  status: number;
  body: string;
}

/** A set-up call that gets no answer in this long fails the run rather than hanging it. */
const ANSWER_TIMEOUT_MS = 30_000;

/**
 * POSTs each of `calls` over `connections` keep-alive HTTP/1.1 connections, one call in flight on each, and answers
 * in the same order. For the bench's set-up calls whose answers it needs (VerifyEmail's codes, one call a user): with
 * connect-node's client the bench spent about 550 µs of CPU a call (signals, headers objects, errors) and the server
 * about 725, at 1 200 calls/s; with this one, 45 and 379 µs at 2 585 calls/s (2026-11-28, 10 000 ResendEmailCode
 * calls; bench/README, "Bench time, again"). It reads only answers with a content-length, as Gatehouse's unary
 * ones are, from a host name or IPv4 address and an explicit port (the bench's servers' URLs).
 */
export async function postAll(url: string, headers: Record<string, string>, calls: { path: string; body: string }[], connections: number): Promise<Http1Answer[]> {
  const { hostname, port } = new URL(url);
  const requestHead = Object.entries({ host: `${hostname}:${port}`, ...headers })
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join("");
  const answers = new Array<Http1Answer>(calls.length);
  let next = 0;
  let failed = false;
  const connection = () =>
    new Promise<void>((resolve, reject) => {
      const socket = connect({ host: hostname, port: Number(port), noDelay: true });
      let pending: Buffer = Buffer.alloc(0);
      let current = -1;
      let settled = false;
      const fail = (error: Error) => {
        if (settled) return;
        settled = failed = true;
        socket.destroy();
        reject(error);
      };
      const send = () => {
        if (failed || next >= calls.length) {
          settled = true;
          socket.end();
          return resolve();
        }
        current = next++;
        const { path, body } = calls[current]!;
        socket.write(`POST ${path} HTTP/1.1\r\n${requestHead}content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
      };
      socket.setTimeout(ANSWER_TIMEOUT_MS, () => fail(new Error(`no answer to set-up call ${current} in ${ANSWER_TIMEOUT_MS} ms`)));
      socket.on("connect", send);
      socket.on("error", fail);
      socket.on("close", () => fail(new Error(`the server closed a set-up connection during call ${current}`)));
      socket.on("data", (chunk: Buffer) => {
        pending = pending.length ? Buffer.concat([pending, chunk]) : chunk;
        const headEnd = pending.indexOf("\r\n\r\n");
        if (headEnd < 0) return;
        const answerHead = pending.subarray(0, headEnd).toString("latin1");
        const length = /\r\ncontent-length:\s*(\d+)/i.exec(answerHead)?.[1];
        if (length === undefined) return fail(new Error(`an answer without content-length: ${answerHead.split("\r\n")[0]}`));
        const end = headEnd + 4 + Number(length);
        if (pending.length < end) return;
        // One call in flight: anything after its answer breaks the exchange.
        if (pending.length > end) return fail(new Error(`more bytes than answer ${current} after it`));
        answers[current] = { status: Number(answerHead.split(" ")[1]), body: pending.subarray(headEnd + 4, end).toString("utf8") };
        pending = Buffer.alloc(0);
        send();
      });
    });
  await Promise.all(Array.from({ length: Math.min(connections, calls.length) }, connection));
  return answers;
}
