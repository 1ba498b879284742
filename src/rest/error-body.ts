import { Code } from "@connectrpc/connect";

/** The `domain` of every ErrorInfo this server sends, on every protocol. */
export const ERROR_DOMAIN = "gatehouse";

const ERROR_INFO_TYPE = "type.googleapis.com/google.rpc.ErrorInfo";

/** The reason of a stale expected_sequence (src/store/store.ts), answered 412 on REST routes. */
const CONCURRENT_MODIFICATION = "concurrent_modification";

/** HTTP status of each gRPC code on REST routes (API.md). */
const STATUS: Record<Code, number> = {
  [Code.Canceled]: 499,
  [Code.Unknown]: 500,
  [Code.InvalidArgument]: 400,
  [Code.DeadlineExceeded]: 504,
  [Code.NotFound]: 404,
  [Code.AlreadyExists]: 409,
  [Code.PermissionDenied]: 403,
  [Code.ResourceExhausted]: 429,
  [Code.FailedPrecondition]: 400,
  [Code.Aborted]: 409,
  [Code.OutOfRange]: 400,
  [Code.Unimplemented]: 501,
  [Code.Internal]: 500,
  [Code.Unavailable]: 503,
  [Code.DataLoss]: 500,
  [Code.Unauthenticated]: 401,
};

const codeOfName = (name: string): Code =>
  (Code[name.replace(/(^|_)([a-z])/g, (_m, _u, c: string) => c.toUpperCase()) as keyof typeof Code] as Code | undefined) ?? Code.Unknown;

/** The SPEC section 7 error body: `{code: <int>, message, details: [{"@type": …, …}]}`. */
export interface SpecErrorBody {
  code: number;
  message: string;
  details: Record<string, unknown>[];
}

export function specError(code: Code, message: string, details: Record<string, unknown>[] = []): { status: number; body: SpecErrorBody } {
  return { status: STATUS[code], body: { code, message, details } };
}

/** The proto3-JSON `Any` of a google.rpc.ErrorInfo in the server's domain, for answers written outside the RPC path. */
export function errorInfoDetail(reason: string, metadata: Record<string, string> = {}): Record<string, unknown> {
  return { "@type": ERROR_INFO_TYPE, reason, domain: ERROR_DOMAIN, metadata };
}

/** What a caller learns of an unexpected error: only the request id its cause is logged under. */
export function internalErrorMessage(requestId: string): string {
  return `internal error (request id ${requestId})`;
}

/** The SPEC body of an unexpected error answered outside the RPC path (reason `internal`, the request id). */
export function internalErrorBody(requestId: string): { status: number; body: SpecErrorBody } {
  return specError(Code.Internal, internalErrorMessage(requestId), [errorInfoDetail("internal", { requestId })]);
}

interface ConnectErrorJson {
  code?: string;
  message?: string;
  details?: { type?: string; debug?: Record<string, unknown> }[];
}

/**
 * Turns a Connect JSON error (what the shared error mapping produced) into the SPEC body. Details
 * become proto3-JSON `Any`s: `{"@type": "type.googleapis.com/google.rpc.ErrorInfo", reason, …}`.
 */
export function fromConnectError(json: ConnectErrorJson): { status: number; body: SpecErrorBody } {
  // Stryker disable next-line StringLiteral: any name that is no code's gives Code.Unknown
  const code = codeOfName(json.code ?? "unknown");
  const details: Record<string, unknown>[] = (json.details ?? []).map((detail) => {
    // Stryker disable next-line StringLiteral: never used: connect's errorToJson writes the type of every detail
    const type = detail.type ?? "";
    return { "@type": `type.googleapis.com/${type}`, ...(detail.debug ?? {}) };
  });
  // Every error carries ErrorInfo (API.md), also one the protocol layer raised before the interceptors.
  if (!details.some((detail) => detail["@type"] === ERROR_INFO_TYPE)) details.unshift(errorInfoDetail(`rpc.${json.code ?? "unknown"}`));
  const error = specError(code, json.message ?? Code[code], details);
  // Every body has ErrorInfo (added above when missing), and first: the `?.` and the `true` mutant of the test are equivalent.
  // Stryker disable next-line OptionalChaining: as above
  const reason = details.find((detail) => detail["@type"] === ERROR_INFO_TYPE)?.reason;
  // A stale expected_sequence (If-Match) is a failed precondition of HTTP: 412, whatever the code maps to.
  return reason === CONCURRENT_MODIFICATION ? { ...error, status: 412 } : error;
}
