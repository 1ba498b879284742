import { type DescMessage, fromBinary, fromJson, type JsonValue } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { compressionBrotli, compressionGzip } from "@connectrpc/connect-node";
import {
  type Compression,
  createAsyncIterable,
  encodeEnvelope,
  type EnvelopedMessage,
  pipe,
  transformJoinEnvelopes,
  type UniversalHandler,
  type UniversalServerRequest,
} from "@connectrpc/connect/protocol";
import { parseContentType as parseConnectContentType, parseTimeout as parseConnectTimeout } from "@connectrpc/connect/protocol-connect";
import { parseContentType as parseGrpcContentType, parseTimeout as parseGrpcTimeout } from "@connectrpc/connect/protocol-grpc";
import { parseContentType as parseGrpcWebContentType } from "@connectrpc/connect/protocol-grpc-web";
import { DomainError, invalidArgument } from "../domain/errors.js";
import { undecodableProtobuf } from "../interceptors/error-mapping.js";
import { createEnvelopeSplitter, splitEnvelopes } from "./envelope-splitter.js";
import { clientWentAway } from "./client-gone.js";
import { createHeldBytes } from "./held-bytes.js";
import { duplicateKeyPath } from "./json-duplicate-keys.js";
import { jsonProblems } from "./json-problems.js";
import { rejectOversizedJson } from "./json-shape.js";

/** The request encodings the server accepts (connect-node's defaults). */
export const REQUEST_COMPRESSIONS: Compression[] = [compressionGzip, compressionBrotli];
const compressions = new Map(REQUEST_COMPRESSIONS.map((c) => [c.name, c]));
const COMPRESSED_FLAG = 0b1;
/** What the protocol handlers check before they read the body (a failing body comes after them). */
const PREFLIGHT_HEADERS = ["content-length", "content-encoding", "connect-content-encoding", "grpc-encoding", "connect-timeout-ms", "grpc-timeout"];
/** The shortest delay a Node timer cannot take (it warns on stderr and fires after 1 ms instead). */
const TIMER_OVERFLOW_MS = 2 ** 31;
// Stryker disable next-line StringLiteral: a POST without a content type has no framing, whatever text stands for "none"
const NO_CONTENT_TYPE = "";
const utf8 = new TextDecoder("utf-8", { fatal: true });

/** How a request body is framed, from its content type; undefined: not ours to check (the handler answers 415). */
interface Framing {
  enveloped: boolean;
  binary: boolean;
  encodingHeader: string;
  timeoutHeader: string;
  parseTimeout: typeof parseGrpcTimeout;
}

function framingOf(contentType: string): Framing | undefined {
  const grpcWeb = parseGrpcWebContentType(contentType);
  if (grpcWeb) return grpcWeb.text ? undefined : { enveloped: true, binary: grpcWeb.binary, encodingHeader: "grpc-encoding", timeoutHeader: "grpc-timeout", parseTimeout: parseGrpcTimeout };
  const grpc = parseGrpcContentType(contentType);
  if (grpc) return { enveloped: true, binary: grpc.binary, encodingHeader: "grpc-encoding", timeoutHeader: "grpc-timeout", parseTimeout: parseGrpcTimeout };
  const connect = parseConnectContentType(contentType);
  if (connect) {
    const encodingHeader = connect.stream ? "connect-content-encoding" : "content-encoding";
    return { enveloped: connect.stream, binary: connect.binary, encodingHeader, timeoutHeader: "connect-timeout-ms", parseTimeout: parseConnectTimeout };
  }
  return undefined;
}

const malformed = (message: string) => invalidArgument("request.malformed", message);
const NOT_JSON = "the request is not valid UTF-8 JSON";
/**
 * Unknown fields of a binary request are dropped, not kept: nothing reads them, and keeping them cost a public health
 * check 2.6-3.9 s for 4 MiB of tiny unknown fields (15 bytes of brotli) against 0.2 s. connect-es reads with the same.
 */
export const BINARY_READ = { readUnknownFields: false };

/** What the JSON or binary reader said, cut short: a hostile body must not become a huge answer. */
function readerMessage(error: unknown): string {
  // Stryker disable next-line StringLiteral,ConditionalExpression: protobuf-es throws nothing but Error instances (the fallback is for the type)
  return error instanceof Error ? error.message.slice(0, 300) : "invalid";
}

function checkJson(desc: DescMessage, json: JsonValue): void {
  const problems = jsonProblems(desc, json);
  if (problems.length > 0) {
    throw invalidArgument("request.malformed", `invalid request: ${problems.map((p) => `${p.field}: ${p.description}`).join("; ")}`, problems);
  }
  try {
    // Stryker disable next-line ObjectLiteral,BooleanLiteral: jsonProblems above already refused unknown fields, and protobuf-es reads JSON with ignoreUnknownFields false by default (stated here for the reader)
    fromJson(desc, json, { ignoreUnknownFields: false });
  } catch (error) {
    throw malformed(`undecodable JSON request: ${readerMessage(error)}`);
  }
}

/**
 * Whatever else a hostile body makes the check itself throw (a RangeError, a stack overflow) is
 * still the body's fault: invalid_argument, answered and logged like any refused request (a
 * warning without a stack), never `internal`.
 */
function checkedSafely(check: () => void): void {
  try {
    check();
  } catch (error) {
    if (error instanceof DomainError || error instanceof ConnectError) throw error;
    throw malformed(`the request could not be checked (${error instanceof Error ? error.name : "error"})`);
  }
}

/** Throws invalid_argument `request.duplicate_key` naming the first key an object of `text` has twice. */
export function rejectDuplicateKeys(text: string): void {
  const path = duplicateKeyPath(text);
  if (path === undefined) return;
  throw invalidArgument("request.duplicate_key", `duplicate key ${JSON.stringify(path)} in the request`, [{ field: path, description: "appears more than once in its object", rule: "json.duplicate_key" }], {
    key: path,
  });
}

/** Throws invalid_argument `request.malformed` unless `json` (parsed by the REST gateway) is one message of `desc`. */
export function checkJsonMessage(desc: DescMessage, json: JsonValue): void {
  checkedSafely(() => checkJson(desc, json));
}

/**
 * Throws invalid_argument `request.malformed` unless `bytes` are one message of `desc`. Returns the message as the
 * handler is to read it: a JSON request's parsed value (connect-es takes a parsed body, as the REST gateway hands it
 * over, and then does not decode and parse the text a second time), or the bytes themselves.
 */
export function checkMessage(desc: DescMessage, bytes: Uint8Array, binary: boolean): Uint8Array | JsonValue {
  let checked: Uint8Array | JsonValue = bytes;
  checkedSafely(() => {
    if (binary) {
      try {
        fromBinary(desc, bytes, BINARY_READ);
      } catch (error) {
        throw undecodableProtobuf(readerMessage(error));
      }
      return;
    }
    let text: string;
    let json: JsonValue;
    try {
      text = utf8.decode(bytes);
    } catch {
      throw malformed(NOT_JSON);
    }
    // Before JSON.parse, whose time a body's shape decides: no caller is known yet.
    rejectOversizedJson(text);
    try {
      json = JSON.parse(text) as JsonValue;
    } catch {
      throw malformed(NOT_JSON);
    }
    rejectDuplicateKeys(text);
    checkJson(desc, json);
    checked = json;
  });
  return checked;
}

async function readAll(body: AsyncIterable<Uint8Array>, readMaxBytes: number): Promise<Uint8Array> {
  const held = createHeldBytes();
  for await (const chunk of body) {
    if (held.size + chunk.byteLength > readMaxBytes) throw new DomainError("resource_exhausted", "request.too_large", `request larger than ${readMaxBytes} bytes`);
    held.add(chunk, readMaxBytes);
  }
  return held.take();
}

/** Bytes that do not inflate are the caller's mistake (zlib reports some of them in ways connect-node calls internal). */
async function decompressed(compression: Compression | undefined, bytes: Uint8Array, readMaxBytes: number): Promise<Uint8Array> {
  if (!compression) return bytes;
  try {
    return await compression.decompress(bytes, readMaxBytes);
  } catch (error) {
    if (error instanceof ConnectError && error.code === Code.ResourceExhausted) {
      throw new DomainError("resource_exhausted", "request.too_large", `request larger than ${readMaxBytes} bytes after decompression`);
    }
    throw malformed(`the request does not decompress as ${compression.name}`);
  }
}

/**
 * The checks of one request envelope, the `index`-th of its request. The binary messages of a client or bidi stream
 * (`single` false) are not decoded here: connect-es decodes those as the handler reads them, inside the interceptors,
 * whose error mapping answers an undecodable one request.malformed — so a bulk import's messages are decoded once, not
 * twice. (A unary message is decoded before any interceptor runs; the one message of a server stream and every
 * compressed message, inflated here to answer what does not inflate, are still checked here too.)
 */
async function checkEnvelope(envelope: EnvelopedMessage, index: number, desc: DescMessage, framing: Framing, compression: Compression | undefined, single: boolean, readMaxBytes: number): Promise<void> {
  if (envelope.flags & ~COMPRESSED_FLAG) throw malformed(`unexpected envelope flags 0x${envelope.flags.toString(16)} in a request`);
  const isCompressed = (envelope.flags & COMPRESSED_FLAG) !== 0;
  if (isCompressed && !compression) throw malformed(`a compressed message needs a ${framing.encodingHeader} header`);
  if (single && index > 0) throw malformed("this method takes exactly one request message");
  const decodedByTheHandler = !single && framing.binary && !isCompressed;
  if (!decodedByTheHandler) checkMessage(desc, await decompressed(isCompressed ? compression : undefined, envelope.data, readMaxBytes), framing.binary);
}

const NO_MESSAGE = "this method takes exactly one request message; none was sent";

/** An empty request message as the handler takes it for the framing: one envelope, the bytes, or the parsed JSON. */
function emptyMessage(framing: Framing): UniversalServerRequest["body"] {
  if (framing.enveloped) return createAsyncIterable([encodeEnvelope(0, new Uint8Array(0))]);
  // (A Connect unary handler takes bytes where its type says JSON, as `checked` hands it the bytes it read.)
  return (framing.binary ? new Uint8Array(0) : {}) as JsonValue;
}

/** Checks each envelope as it passes; the bytes go on unchanged, so the handler parses what the client sent. */
async function* checkedEnvelopes(
  envelopes: AsyncIterable<EnvelopedMessage>,
  desc: DescMessage,
  framing: Framing,
  compression: Compression | undefined,
  single: boolean,
  readMaxBytes: number,
): AsyncIterable<EnvelopedMessage> {
  let count = 0;
  for await (const envelope of envelopes) {
    await checkEnvelope(envelope, count++, desc, framing, compression, single, readMaxBytes);
    yield envelope;
  }
  if (single && count === 0) throw malformed(NO_MESSAGE);
}

/**
 * A unary rpc's enveloped body (gRPC, gRPC-web), read whole — connect-es reads it whole too before the rpc runs — and
 * its envelope checked as it completes (a second one is refused). Answers that envelope, framed again for connect-es:
 * a plain read and one synchronous split instead of a chain of streams over the envelopes (split, check, join again),
 * which cost a unary gRPC call more than its own handler does.
 */
async function readUnaryEnvelope(body: AsyncIterable<Uint8Array>, check: (envelope: EnvelopedMessage, index: number) => Promise<void>, readMaxBytes: number): Promise<Uint8Array> {
  const splitter = createEnvelopeSplitter(readMaxBytes);
  let message: EnvelopedMessage | undefined;
  let count = 0;
  for await (const chunk of body) {
    for (const envelope of splitter.push(chunk)) {
      await check(envelope, count++);
      message = envelope;
    }
  }
  splitter.end();
  if (message === undefined) throw malformed(NO_MESSAGE);
  return encodeEnvelope(message.flags, message.data);
}

/** Turns any failure while reading into the error the handler answers with. */
async function* failingAs<T>(source: AsyncIterable<T>, toError: (error: unknown) => unknown): AsyncIterable<T> {
  try {
    yield* source;
  } catch (error) {
    throw toError(error);
  }
}

// biome-ignore lint/correctness/useYield: a body that fails on its first read
async function* failing(error: () => unknown): AsyncIterable<Uint8Array> {
  throw error();
}

export interface DecodeCheckOptions {
  readMaxBytes: number;
  /**
   * Called once per rejected request with the typed error; returns the wire error the handler sends. `rpcRunning`:
   * the refusal came while a streaming rpc read its messages, so the rpc records the call itself.
   */
  reject(request: UniversalServerRequest, handler: UniversalHandler, error: DomainError | ConnectError, rpcRunning: boolean): ConnectError;
  /**
   * Whether the call may have its body read: false for a unary call whose caller is not authenticated (connect-es reads
   * a unary body before any interceptor runs). Such a call gets an empty request message instead, unread, and the
   * interceptors refuse it as they refuse any unauthenticated call.
   */
  admit?(request: UniversalServerRequest, handler: UniversalHandler): Promise<boolean>;
}

/**
 * connect-es parses a request before any interceptor sees it, and reports what it cannot decode as
 * `internal` (binary) or drops what it does not know (JSON). This wrapper decodes every request
 * message first, exactly as the handler will, and answers what does not decode with
 * invalid_argument `request.malformed` (what the Connect reference implementation answers), with
 * ErrorInfo — by handing the handler a body that fails with that error, so each protocol encodes
 * it in its own way. Header problems the handler would report without ErrorInfo (an unknown
 * encoding, a bad timeout) are raised the same way.
 */
export function withDecodeCheck(handler: UniversalHandler, options: DecodeCheckOptions): UniversalHandler {
  const desc = handler.method.input;
  const single = handler.method.methodKind === "unary" || handler.method.methodKind === "server_streaming";
  // connect-es reads a unary request before the interceptors run; a streaming rpc's messages (a server stream's one
  // message too) inside them, so the rpc, already observed, records a refusal met while reading them itself.
  const rpcRunsFirst = handler.method.methodKind !== "unary";
  const { readMaxBytes } = options;

  async function checked(req: UniversalServerRequest): ReturnType<UniversalHandler> {
    const toError = (error: unknown) =>
      error instanceof DomainError || error instanceof ConnectError ? options.reject(req, handler, error, rpcRunsFirst) : clientWentAway(error);
    const fail = (error: unknown) => {
      const header = new Headers(req.header);
      // The handler would check these before reading the body and answer without ErrorInfo.
      for (const name of PREFLIGHT_HEADERS) header.delete(name);
      // Refused when the body is read: an rpc that never reads it (its caller unauthenticated) is not refused for it.
      return handler({ ...req, header, body: failing(() => toError(error)) });
    };

    // The REST gateway hands over JSON it has parsed already: always an object (gateway.ts refuses any other body).
    if (!(Symbol.asyncIterator in (req.body as object))) {
      try {
        checkJsonMessage(desc, req.body as JsonValue);
      } catch (error) {
        return fail(error);
      }
      return handler(req);
    }
    const framing = req.method === "POST" ? framingOf(req.header.get("content-type") ?? NO_CONTENT_TYPE) : undefined;
    if (!framing) return handler(req);

    const timeout = framing.parseTimeout(req.header.get(framing.timeoutHeader), Number.MAX_SAFE_INTEGER);
    if (timeout.error) return fail(timeout.error);
    // Timeouts this long are whole milliseconds (seconds, minutes, hours, or Connect's milliseconds).
    if ((timeout.timeoutMs ?? 0) >= TIMER_OVERFLOW_MS) {
      // Node's timers overflow past ~24.8 days (and warn on stderr each time): such a deadline means "none".
      const header = new Headers(req.header);
      header.delete(framing.timeoutHeader);
      return checked({ ...req, header });
    }
    // No encoding header is the identity encoding, which needs no compression.
    const encoding = req.header.get(framing.encodingHeader) ?? "identity";
    const compression = compressions.get(encoding);
    if (encoding !== "identity" && !compression) {
      const error = new DomainError("invalid_argument", "request.unsupported_encoding", `unsupported ${framing.encodingHeader} "${encoding.slice(0, 32)}"; supported: ${[...compressions.keys()].join(", ")}`);
      return fail(error);
    }

    // Nothing of the body is read, inflated or parsed for a caller who is not let in.
    if (options.admit && !(await options.admit(req, handler))) return handler({ ...req, body: emptyMessage(framing) });
    const body = req.body as AsyncIterable<Uint8Array>;
    if (framing.enveloped && handler.method.methodKind === "unary") {
      let bytes: Uint8Array;
      try {
        bytes = await readUnaryEnvelope(body, (envelope, index) => checkEnvelope(envelope, index, desc, framing, compression, true, readMaxBytes), readMaxBytes);
      } catch (error) {
        return fail(error);
      }
      return handler({ ...req, body: createAsyncIterable([bytes]) });
    }
    if (framing.enveloped) {
      const envelopes = checkedEnvelopes(splitEnvelopes(body, readMaxBytes), desc, framing, compression, single, readMaxBytes);
      return handler({ ...req, body: pipe(failingAs(envelopes, toError), transformJoinEnvelopes()) });
    }
    let message: Uint8Array | JsonValue;
    try {
      // Stryker disable next-line all: refusing by the declared length only saves reading the body: readAll refuses the same body with the same error
      const declared = Number(req.header.get("content-length") ?? "0");
      // Stryker disable next-line ConditionalExpression: as above (its `false`; its `true` would refuse every body)
      if (declared > readMaxBytes) throw new DomainError("resource_exhausted", "request.too_large", `request larger than ${readMaxBytes} bytes`);
      const bytes = await readAll(body, readMaxBytes);
      message = checkMessage(desc, await decompressed(compression, bytes, readMaxBytes), framing.binary);
    } catch (error) {
      return fail(error);
    }
    // A Connect unary handler takes a body that is not a stream as the request itself (the inflated bytes, or the
    // parsed JSON), so what was read, inflated and parsed here is not done again: about 18 µs of a 260 µs no-op call
    // (bench/README.md).
    return handler({ ...req, body: message as JsonValue });
  }

  return Object.assign(checked, {
    service: handler.service,
    method: handler.method,
    requestPath: handler.requestPath,
    supportedContentType: handler.supportedContentType,
    protocolNames: handler.protocolNames,
    allowedMethods: handler.allowedMethods,
  });
}
