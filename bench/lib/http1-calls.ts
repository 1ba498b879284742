import { connect } from "node:net";

/** One call's answer: its HTTP status and body. */
export interface Http1Answer {
  status: number;
  body: string;
}

/**
 * POSTs each of `calls` over `connections` keep-alive HTTP/1.1 connections, one call in flight on each, and answers
 * in the same order. For the bench's set-up calls whose answers it needs (VerifyEmail's codes, one call a user): with
 * connect-node's client the bench spent 550-670 µs of CPU a call (signals, headers objects, errors) and fed the server
 * too slowly to batch its commits, about 1 200 calls/s; this spends about 45 and the server's side halves (2026-11-28,
 * 10 000 ResendEmailCode calls: 2 585/s). It reads only answers with a content-length, as Gatehouse's unary ones are.
 */
export async function postAll(url: string, headers: Record<string, string>, calls: { path: string; body: string }[], connections: number): Promise<Http1Answer[]> {
  const { hostname, port } = new URL(url);
  const head = Object.entries({ host: `${hostname}:${port}`, ...headers })
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join("");
  const answers = new Array<Http1Answer>(calls.length);
  let next = 0;
  const connection = () =>
    new Promise<void>((resolve, reject) => {
      const socket = connect({ host: hostname, port: Number(port), noDelay: true });
      let pending: Buffer = Buffer.alloc(0);
      let current = -1;
      let finished = false;
      const send = () => {
        if (next >= calls.length) {
          finished = true;
          socket.end();
          return resolve();
        }
        current = next++;
        const body = Buffer.from(calls[current]!.body);
        socket.write(`POST ${calls[current]!.path} HTTP/1.1\r\n${head}content-length: ${body.length}\r\n\r\n`);
        socket.write(body);
      };
      socket.on("connect", send);
      socket.on("error", (error) => finished || reject(error));
      socket.on("close", () => finished || reject(new Error(`the server closed a set-up connection during call ${current}`)));
      socket.on("data", (chunk: Buffer) => {
        pending = pending.length ? Buffer.concat([pending, chunk]) : chunk;
        const headEnd = pending.indexOf("\r\n\r\n");
        if (headEnd < 0) return;
        const head = pending.subarray(0, headEnd).toString("latin1");
        const length = /\r\ncontent-length:\s*(\d+)/i.exec(head)?.[1];
        if (length === undefined) {
          finished = true;
          socket.destroy();
          return reject(new Error(`an answer without content-length: ${head.split("\r\n")[0]}`));
        }
        const end = headEnd + 4 + Number(length);
        if (pending.length < end) return;
        answers[current] = { status: Number(head.split(" ")[1]), body: pending.subarray(headEnd + 4, end).toString("utf8") };
        pending = pending.subarray(end);
        send();
      });
    });
  await Promise.all(Array.from({ length: Math.min(connections, calls.length) }, connection));
  return answers;
}
