import type { JsonObject } from "@bufbuild/protobuf";
import { Code, type ConnectRouter, createConnectRouter, createContextValues, type Interceptor } from "@connectrpc/connect";
import type { connectNodeAdapter } from "@connectrpc/connect-node";
import type { UniversalServerRequest } from "@connectrpc/connect/protocol";
import { errorToJson } from "@connectrpc/connect/protocol-connect";
import type { ServerResponse } from "node:http";
import { DomainError } from "../domain/errors.js";
import { requestIdKey } from "../interceptors/context-keys.js";
import { fromDomainError } from "../interceptors/error-mapping.js";
import { type DecodeCheckOptions, rejectDuplicateKeys, withDecodeCheck } from "../transport/decode-check.js";
import { rejectOversizedJson } from "../transport/json-shape.js";
import { peerAddressKey, peerAddressOf } from "../transport/peer.js";
import { errorInfoDetail, fromConnectError, type SpecErrorBody, specError } from "./error-body.js";
import { jsonNameOf, type RestRoute, restRoutes } from "./http-rules.js";

/** The request and response types of node's http and http2 servers, as connect-node takes them. */
type NodeHandler = ReturnType<typeof connectNodeAdapter>;
type Request = Parameters<NodeHandler>[0];
type Response = Parameters<NodeHandler>[1];

/** Headers a REST caller may send that the RPC sees as well. */
const FORWARDED = ["authorization", "x-service-orgid", "x-request-id", "user-agent"];
/** Headers of the inner Connect response that stay inner. */
const INNER = new Set(["content-type", "content-length", "content-encoding", "connect-protocol-version"]);

class RestInputError extends Error {
  constructor(readonly error: { status: number; body: SpecErrorBody }) {
    super(error.body.message);
  }
}

function send(res: Response, status: number, body: unknown, headers: Record<string, string> = {}) {
  (res as ServerResponse).writeHead(status, { ...headers, "content-type": "application/json" });
  res.end(body instanceof Uint8Array ? body : JSON.stringify(body));
}

/**
 * The client closed its connection before its request body was complete: no call ran and nobody is left to answer.
 * Not a server error (the caller logs it as the client's doing).
 */
export class RequestAbandonedError extends Error {
  constructor() {
    super("the client closed the connection before its request body was complete");
  }
}

async function readJsonObject(req: Request, maxBytes: number): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of req as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > maxBytes) throw new RestInputError(specError(Code.ResourceExhausted, `request body larger than ${maxBytes} bytes`, [errorInfoDetail("request.too_large")]));
      chunks.push(chunk);
    }
  } catch (error) {
    // Node's request stream fails with "aborted" when the client hangs up mid-body.
    if (!(error instanceof RestInputError) && !req.complete) throw new RequestAbandonedError();
    throw error;
  }
  const text = Buffer.concat(chunks).toString("utf8").trim();
  if (text === "") return {};
  // Before JSON.parse, whose time a body's shape decides (json-shape.ts): the same refusal as on the RPC path.
  asRestInput(() => rejectOversizedJson(text));
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new RestInputError(specError(Code.InvalidArgument, "the body is not valid JSON", [errorInfoDetail("request.malformed")]));
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new RestInputError(specError(Code.InvalidArgument, "the body must be a JSON object", [errorInfoDetail("request.malformed")]));
  }
  // JSON.parse keeps the last of two equal keys; a body that says two things is refused, as on the RPC path
  // and with the same error, in the SPEC body the RPC's answer would become.
  asRestInput(() => rejectDuplicateKeys(text));
  return value as Record<string, unknown>;
}

/** Runs a check of the RPC path's; its DomainError becomes the SPEC body the RPC's answer would become. */
function asRestInput(check: () => void): void {
  try {
    check();
  } catch (error) {
    // Stryker disable next-line ConditionalExpression: unreachable: the checks throw nothing but their DomainError
    if (!(error instanceof DomainError)) throw error;
    throw new RestInputError(fromConnectError(errorToJson(fromDomainError(error), undefined)));
  }
}

/** The RPC's JSON request: the body, then query parameters, then path parameters (which win). */
async function requestJson(route: RestRoute, req: Request, url: URL, maxBytes: number): Promise<Record<string, unknown>> {
  const input = route.handler.method.input;
  const json = route.body === "*" ? await readJsonObject(req, maxBytes) : {};
  for (const key of new Set(url.searchParams.keys())) {
    if (route.body === "*") break;
    const values = url.searchParams.getAll(key);
    const field = input.fields.find((f) => f.name === key || f.jsonName === key);
    json[field?.jsonName ?? key] = field?.fieldKind === "list" ? values : values[0];
  }
  // Stryker disable next-line OptionalChaining: the route was chosen because its pattern matches this path
  const params = route.pattern.exec(url.pathname)?.groups ?? {};
  // Stryker disable next-line StringLiteral: never used: the route's pattern matched, so it has a group for every path field
  for (const field of route.pathFields) json[jsonNameOf(input, field)] = decodePathSegment(field, params[field] ?? "");
  return json;
}

/** `%ZZ` or an escape of invalid UTF-8 is the caller's mistake: 400 naming the path parameter. */
function decodePathSegment(field: string, segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    const violation = { field, description: "is not a valid percent-encoded UTF-8 path segment" };
    throw new RestInputError(
      specError(Code.InvalidArgument, `path parameter ${field} ${violation.description}`, [
        errorInfoDetail("request.malformed"),
        { "@type": "type.googleapis.com/google.rpc.BadRequest", fieldViolations: [violation] },
      ]),
    );
  }
}

/** The request field `If-Match` stands for (optimistic concurrency, API.md). */
const EXPECTED_SEQUENCE = "expected_sequence";
/** One strong entity tag of a sequence (a uint64: at most 20 digits), as `ETag` sends it. */
const SEQUENCE_TAG = /^"(0|[1-9][0-9]{0,19})"$/;
const MAX_UINT64 = 2n ** 64n - 1n;

function ifMatchError(description: string): RestInputError {
  return new RestInputError(
    specError(Code.InvalidArgument, `If-Match ${description}`, [
      errorInfoDetail("request.invalid"),
      { "@type": "type.googleapis.com/google.rpc.BadRequest", fieldViolations: [{ field: "If-Match", description, reason: "header.if_match" }] },
    ]),
  );
}

/**
 * `If-Match` becomes the RPC's `expected_sequence`: `"<sequence>"` (the ETag a response sent) expects it, `*` expects
 * nothing (any current version). One strong tag only; anything else is the caller's mistake (400 naming If-Match),
 * and so is If-Match on a route whose RPC takes no expected_sequence: a condition the server cannot judge is never
 * ignored. A body that also names expected_sequence must name the same one.
 */
function applyIfMatch(route: RestRoute, req: Request, json: Record<string, unknown>): void {
  const header = req.headers["if-match"];
  if (header === undefined) return;
  const field = route.handler.method.input.fields.find((f) => f.name === EXPECTED_SEQUENCE);
  // Stryker disable next-line StringLiteral: the description's wording; its field, reason and code are tested
  if (!field) throw ifMatchError("is not taken by this route (its call has no expected_sequence)");
  // No trim: Node's HTTP/1.1 parser strips the white space around a header's value; over HTTP/2, nghttp2 drops a header
  // whose value has any (RFC 9113 calls it malformed), so such an If-Match never arrives.
  const value = String(header);
  if (value === "*") return;
  const sequence = SEQUENCE_TAG.exec(value)?.[1];
  if (sequence === undefined || BigInt(sequence) > MAX_UINT64) {
    throw ifMatchError('must be one strong entity tag of a sequence as ETag sends it ("42"), or *');
  }
  const inBody = json[field.jsonName] ?? json[field.name];
  // Stryker disable next-line StringLiteral: the description's wording; its field, reason and code are tested
  if (inBody !== undefined && String(inBody) !== sequence) throw ifMatchError("names another sequence than the body's expected_sequence");
  delete json[field.name];
  json[field.jsonName] = sequence;
}

/**
 * The `ETag` of an answer that carries one object's details: `"<details.sequence>"` (strong), from the answer's own
 * `details` (a write's) or, for an answer that is one object, that object's (a read's: `{"app": {…, "details": …}}`).
 * Answers without such details (lists) get none. Connect writes every successful answer as a JSON object, and a
 * uint64 as a decimal string.
 */
function entityTagOf(bytes: Buffer): string | undefined {
  const body = JSON.parse(bytes.toString("utf8")) as Record<string, unknown>;
  const values = Object.values(body);
  const sequence = sequenceOf(body) ?? (values.length === 1 ? sequenceOf(values[0]) : undefined);
  return typeof sequence === "string" ? `"${sequence}"` : undefined;
}

// (The first `?.` is equivalent: an answer and its only value are JSON objects, connect writes no null; the mutant survives.)
const sequenceOf = (value: unknown): unknown => (value as { details?: { sequence?: unknown } } | null | undefined)?.details?.sequence;

/** The inner Connect error body; one that is not JSON (never expected) still becomes a SPEC body. */
function parseErrorJson(bytes: Buffer): object {
  try {
    // An empty body is no JSON either: {} below.
    // Stryker disable BlockStatement: the catch below is unreachable: connect writes every error of the inner call as JSON (a range: Stryker reads only a comment that leads a statement, and none leads a `catch`/`finally`)
    const value: unknown = JSON.parse(bytes.toString("utf8"));
    // Stryker disable next-line ConditionalExpression,LogicalOperator: unreachable: connect writes every error of the inner call as a JSON object
    return typeof value === "object" && value !== null ? value : {};
  } catch {
    return {};
  }
}

// Stryker restore BlockStatement
async function collect(body: AsyncIterable<Uint8Array> | undefined): Promise<Buffer> {
  const chunks: Uint8Array[] = [];
  // Stryker disable next-line ConditionalExpression: connect's inner response always has a body, on success and on error
  if (body) for await (const chunk of body) chunks.push(chunk);
  return Buffer.concat(chunks);
}

/**
 * REST transcoding of every RPC with a google.api.http annotation. A REST call becomes a Connect
 * JSON call of the same RPC on a router with the same routes and interceptors — validation,
 * authentication, error mapping and logging are the RPC's, not a second implementation. Errors
 * come back in the SPEC section 7 body with the API.md status mapping.
 */
export function createRestGateway(options: {
  routes: (router: ConnectRouter) => void;
  interceptors: Interceptor[];
  maxRequestBytes: number;
  reject: DecodeCheckOptions["reject"];
  /** Authenticates a call before its body is read, as on the RPC path (decode-check.ts). */
  admit?: DecodeCheckOptions["admit"];
}) {
  const router = createConnectRouter({ interceptors: options.interceptors });
  options.routes(router);
  // The same check as the RPC path: unknown keys, unknown enum names and impossible dates are
  // refused with ErrorInfo and the field's path, before the handler would bend or drop them.
  const checked = router.handlers.map((handler) => withDecodeCheck(handler, { readMaxBytes: options.maxRequestBytes, reject: options.reject }));
  const routes = restRoutes(checked);

  /** Handles the request when a REST route's path matches; returns false otherwise. */
  return async function handleRest(req: Request, res: Response, requestId: string): Promise<boolean> {
    let url: URL;
    try {
      // (Node gives every request it serves a url: the "/" fallback is never used, and its mutant survives.)
      url = new URL(req.url ?? "/", "http://gatehouse.invalid");
    } catch {
      return false; // not a path any route can match: the caller answers 404
    }
    const candidates = routes.filter((route) => route.pattern.test(url.pathname));
    if (candidates.length === 0) return false;
    const route = candidates.find((candidate) => candidate.httpMethod === req.method);
    if (!route) {
      const allow = [...new Set(candidates.map((c) => c.httpMethod))].join(", ");
      // Stryker disable next-line MethodExpression,OptionalChaining: node's parser accepts only known methods (all shorter than 32) and every request has one
      const message = `method ${req.method?.slice(0, 32)} not allowed; allowed: ${allow}`;
      send(res, 405, { code: Code.Unimplemented, message, details: [errorInfoDetail("http.method_not_allowed")] }, { allow });
      return true;
    }
    try {
      const header = new Headers({ "content-type": "application/json" });
      for (const name of FORWARDED) {
        const value = req.headers[name];
        if (typeof value === "string") header.set(name, value);
      }
      const contextValues = createContextValues().set(requestIdKey, requestId).set(peerAddressKey, peerAddressOf(req.socket));
      // As on the RPC path: a caller not let in has nothing of its request read (not even its If-Match); the RPC gets
      // an empty message and its authentication ends it with the admission's refusal.
      const admitted = options.admit === undefined || (await options.admit({ header, contextValues } as UniversalServerRequest, route.handler));
      const body = admitted ? await requestJson(route, req, url, options.maxRequestBytes) : {};
      if (admitted) applyIfMatch(route, req, body);
      const controller = new AbortController();
      res.once("close", () => controller.abort());
      const inner = await route.handler({
        // Stryker disable next-line StringLiteral: connect does not read the HTTP version of a unary Connect JSON POST
        httpVersion: "1.1",
        method: "POST",
        url: `http://gatehouse.invalid${route.handler.requestPath}`,
        header,
        body: body as JsonObject,
        signal: controller.signal,
        contextValues,
      });
      const bytes = await collect(inner.body);
      const headers: Record<string, string> = {};
      // Stryker disable next-line OptionalChaining: connect's inner response always has headers
      inner.header?.forEach((value, name) => {
        if (!INNER.has(name)) headers[name] = value;
      });
      if (inner.status === 200) {
        const tag = entityTagOf(bytes);
        send(res, 200, bytes, tag === undefined ? headers : { ...headers, etag: tag });
      } else {
        const error = fromConnectError(parseErrorJson(bytes));
        send(res, error.status, error.body, headers);
      }
    } catch (thrown) {
      if (!(thrown instanceof RestInputError)) throw thrown;
      send(res, thrown.error.status, thrown.error.body);
    }
    return true;
  };
}
