import { createRegistry, fromBinary } from "@bufbuild/protobuf";
import { anyUnpack } from "@bufbuild/protobuf/wkt";
import http from "node:http";
import http2 from "node:http2";
import { afterAll, beforeAll } from "vitest";
import { ErrorInfoSchema, file_google_rpc_error_details } from "../../gen/google/rpc/error_details_pb.js";
import { StatusSchema } from "../../gen/google/rpc/status_pb.js";

/** What came back on the wire, whatever the protocol. */
export interface WireResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  trailers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

export interface WireRequest {
  method?: string;
  path: string;
  headers?: Record<string, string>;
  body?: Uint8Array | string;
}

/** A length-prefixed message (gRPC, gRPC-web, Connect streaming): flags, 4-byte length, data. */
export function envelope(data: Uint8Array, flags = 0, length = data.byteLength): Buffer {
  const head = Buffer.alloc(5);
  head.writeUInt8(flags, 0);
  head.writeUInt32BE(length >>> 0, 1);
  return Buffer.concat([head, data]);
}

/** One HTTP/1.1 request on a keep-alive agent. Rejects only on transport errors. */
export function http1Request(baseUrl: string, agent: http.Agent, request: WireRequest, timeoutMs = 10_000): Promise<WireResponse> {
  return new Promise((resolve, reject) => {
    const url = new URL(baseUrl);
    const req = http.request(
      { host: url.hostname, port: url.port, method: request.method ?? "POST", path: request.path, headers: request.headers ?? {}, agent, timeout: timeoutMs },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, trailers: res.trailers, body: Buffer.concat(chunks) }));
        res.on("error", reject);
      },
    );
    req.on("timeout", () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on("error", reject);
    req.end(request.body === undefined ? undefined : Buffer.from(request.body));
  });
}

/** One request on an HTTP/2 session. Rejects only on transport errors (including a refused stream). */
export function h2Request(session: http2.ClientHttp2Session, request: WireRequest, timeoutMs = 10_000): Promise<WireResponse> {
  return new Promise((resolve, reject) => {
    // endStream false: Node would end a GET or HEAD stream at once, and the body is sent whatever the method.
    const stream = session.request({ ":method": request.method ?? "POST", ":path": request.path, ...(request.headers ?? {}) }, { endStream: false });
    let status = 0;
    let headers: http.IncomingHttpHeaders = {};
    let trailers: Record<string, string | string[] | undefined> = {};
    const chunks: Buffer[] = [];
    stream.setTimeout(timeoutMs, () => stream.close(http2.constants.NGHTTP2_CANCEL));
    stream.on("response", (h) => {
      status = Number(h[":status"]);
      headers = h as http.IncomingHttpHeaders;
    });
    stream.on("trailers", (t) => {
      trailers = t as typeof trailers;
    });
    stream.on("data", (chunk: Buffer) => chunks.push(chunk));
    stream.on("end", () => resolve({ status, headers, trailers, body: Buffer.concat(chunks) }));
    stream.on("error", reject);
    stream.on("close", () => {
      if (status === 0) reject(new Error(`stream closed without an answer (rst ${stream.rstCode})`));
    });
    stream.end(request.body === undefined ? undefined : Buffer.from(request.body));
  });
}

/** The gRPC status of a gRPC (trailers, or headers for trailers-only) or gRPC-web (trailer frame) answer. */
export function grpcStatus(response: WireResponse): { code?: number; message?: string; detailsBin?: string } {
  const pick = (source: Record<string, string | string[] | undefined>) => {
    const code = source["grpc-status"];
    if (code === undefined) return undefined;
    return { code: Number(code), message: String(source["grpc-message"] ?? ""), detailsBin: source["grpc-status-details-bin"] as string | undefined };
  };
  const fromHeaders = pick(response.trailers) ?? pick(response.headers);
  if (fromHeaders) return fromHeaders;
  // gRPC-web: the trailer is the last frame, flag 0x80, HTTP/1-style header lines.
  let offset = 0;
  while (offset + 5 <= response.body.length) {
    const flags = response.body.readUInt8(offset);
    const length = response.body.readUInt32BE(offset + 1);
    const data = response.body.subarray(offset + 5, offset + 5 + length);
    if (flags & 0x80) {
      const fields: Record<string, string> = {};
      for (const line of data.toString("utf8").split("\r\n")) {
        const colon = line.indexOf(":");
        if (colon > 0) fields[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
      }
      return pick(fields) ?? {};
    }
    offset += 5 + length;
  }
  return {};
}

const registry = createRegistry(file_google_rpc_error_details);

/** The ErrorInfo reasons in a `grpc-status-details-bin` value. */
export function errorInfoReasons(detailsBin: string | undefined): string[] {
  if (!detailsBin) return [];
  const status = fromBinary(StatusSchema, Buffer.from(detailsBin, "base64"));
  return status.details.flatMap((any) => {
    const unpacked = anyUnpack(any, registry);
    return unpacked && unpacked.$typeName === ErrorInfoSchema.typeName ? [(unpacked as unknown as { reason: string }).reason] : [];
  });
}

/** The ErrorInfo reason of a JSON error body: Connect (`details[].debug`) or SPEC (`details[]["@type"]`). */
export function jsonErrorReason(body: Buffer): string | undefined {
  try {
    const json = JSON.parse(body.toString("utf8")) as { details?: Record<string, unknown>[] };
    for (const detail of json.details ?? []) {
      if (detail["@type"] === "type.googleapis.com/google.rpc.ErrorInfo") return detail.reason as string;
      if (detail.type === "google.rpc.ErrorInfo") {
        const debug = detail.debug as { reason?: string } | undefined;
        if (debug?.reason) return debug.reason;
        return fromBinary(ErrorInfoSchema, Buffer.from(String(detail.value), "base64")).reason;
      }
    }
  } catch {
    return undefined;
  }
  return undefined;
}

export function connectH2(baseUrl: string): Promise<http2.ClientHttp2Session> {
  return new Promise((resolve, reject) => {
    const session = http2.connect(baseUrl);
    session.once("connect", () => resolve(session));
    session.once("error", reject);
  });
}

/**
 * One keep-alive HTTP/1.1 agent and one HTTP/2 session to a test server, opened in beforeAll and closed
 * in afterAll, for tests that send hand-made requests over real sockets.
 */
export function useWireConnections(server: () => { url: string }): { readonly agent: http.Agent; readonly session: http2.ClientHttp2Session } {
  let agent: http.Agent | undefined;
  let session: http2.ClientHttp2Session | undefined;
  beforeAll(async () => {
    agent = new http.Agent({ keepAlive: true });
    session = await connectH2(server().url);
  });
  afterAll(() => {
    agent?.destroy();
    session?.close();
  });
  const opened = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error("the connections open in beforeAll");
    return value;
  };
  return {
    get agent() {
      return opened(agent);
    },
    get session() {
      return opened(session);
    },
  };
}
