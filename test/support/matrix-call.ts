import type { DescMethod } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient, type Transport } from "@connectrpc/connect";
import { type CallOptions, type Clients, PROTOCOLS, type Protocol } from "./clients.js";
import { errorShape } from "./errors.js";

/** Every service the server registers: the matrix must have a row for each of their RPCs. */
import { SERVED_SERVICES } from "../../src/routes.js";

export { SERVED_SERVICES };

/** `package.Service/Method`, the key of a matrix row. */
export function rpcKey(method: DescMethod): string {
  return `${method.parent.typeName}/${method.name}`;
}

export function describedMethods(): Map<string, DescMethod> {
  return new Map(SERVED_SERVICES.flatMap((service) => service.methods.map((method) => [rpcKey(method), method] as const)));
}

/** What a call answered: `ok`, or the error's code and ErrorInfo reason. */
export interface Answer {
  code: Code | "ok";
  reason?: string;
}

export function describeAnswer(answer: Answer): string {
  return answer.code === "ok" ? "ok" : `${Code[answer.code]}${answer.reason ? ` (${answer.reason})` : ""}`;
}

/**
 * Protocol for the n-th cell: rotates over all four. Bidi streams need HTTP/2 (connect-node cannot
 * stream a request body both ways over HTTP/1.1), so they rotate over the h2c protocols only.
 */
export function protocolFor(method: DescMethod, n: number): Protocol {
  const usable = method.methodKind === "bidi_streaming" ? PROTOCOLS.filter((p) => p.endsWith("h2c")) : PROTOCOLS;
  return usable[n % usable.length]!;
}

/**
 * Transports shared by cells with the same protocol and headers, so hundreds of cells reuse a few
 * HTTP/2 sessions instead of opening one each.
 */
export class TransportCache {
  private readonly transports = new Map<string, Transport>();

  constructor(private readonly clients: Clients) {}

  get(protocol: Protocol, options: CallOptions): Transport {
    const key = `${protocol}|${options.token ?? ""}|${options.orgId ?? ""}`;
    let transport = this.transports.get(key);
    if (!transport) {
      transport = this.clients.transport(protocol, options);
      this.transports.set(key, transport);
    }
    return transport;
  }
}

type AnyMethod = (input: unknown, options: { signal: AbortSignal; timeoutMs: number }) => unknown;

/**
 * Calls any RPC by its descriptor and reports what it answered. A streaming RPC counts as answered
 * with its first response message (or the error that ended it); the stream is then cancelled.
 */
export async function callRpc(method: DescMethod, transport: Transport, input: Record<string, unknown>): Promise<Answer> {
  const client = createClient(method.parent, transport) as unknown as Record<string, AnyMethod>;
  const invoke = client[method.localName]!;
  const controller = new AbortController();
  const options = { signal: controller.signal, timeoutMs: 15_000 };
  try {
    if (method.methodKind === "unary") {
      await invoke(input, options);
      return { code: "ok" };
    }
    const argument =
      method.methodKind === "bidi_streaming" || method.methodKind === "client_streaming"
        ? (async function* oneRequest() {
            yield input;
          })()
        : input;
    const stream = invoke(argument, options);
    if (method.methodKind === "client_streaming") {
      await stream;
      return { code: "ok" };
    }
    for await (const _first of stream as AsyncIterable<unknown>) return { code: "ok" };
    return { code: "ok" };
  } catch (error) {
    const shape = errorShape(ConnectError.from(error));
    return { code: shape.code, ...(shape.reason ? { reason: shape.reason } : {}) };
  } finally {
    controller.abort();
  }
}

/** Runs `tasks` with at most `width` in flight; results in task order. */
export async function inBatches<T>(tasks: (() => Promise<T>)[], width: number): Promise<T[]> {
  const results: T[] = new Array(tasks.length);
  let next = 0;
  const worker = async () => {
    while (next < tasks.length) {
      const index = next++;
      results[index] = await tasks[index]!();
    }
  };
  await Promise.all(Array.from({ length: Math.min(width, tasks.length) }, worker));
  return results;
}
