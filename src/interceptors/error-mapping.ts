import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import { BadRequestSchema, ErrorInfoSchema } from "../../gen/google/rpc/error_details_pb.js";
import { DomainError, type ErrorKind, invalidArgument } from "../domain/errors.js";
import { ERROR_DOMAIN, internalErrorMessage } from "../rest/error-body.js";
import { withoutStack } from "../support/stackless.js";
import type { Logger } from "../support/logger.js";
import { codeName } from "./code-name.js";
import { requestIdKey } from "./context-keys.js";
import { type AnyRequest, answerOf } from "./next.js";

const codeOfKind: Record<ErrorKind, Code> = {
  invalid_argument: Code.InvalidArgument,
  failed_precondition: Code.FailedPrecondition,
  not_found: Code.NotFound,
  already_exists: Code.AlreadyExists,
  permission_denied: Code.PermissionDenied,
  unauthenticated: Code.Unauthenticated,
  aborted: Code.Aborted,
  resource_exhausted: Code.ResourceExhausted,
  unavailable: Code.Unavailable,
};

function errorInfo(reason: string, metadata: Record<string, string>) {
  return { desc: ErrorInfoSchema, value: create(ErrorInfoSchema, { reason, domain: ERROR_DOMAIN, metadata }) };
}

/** A DomainError as the wire error every protocol answers with: its kind, reason, metadata and field violations. */
export function fromDomainError(error: DomainError): ConnectError {
  const details = [errorInfo(error.reason, error.metadata)];
  // Without a stack, as the DomainError it answers (support/stackless.ts).
  const connectError = withoutStack(() => new ConnectError(error.message, codeOfKind[error.kind], undefined, details));
  if (error.violations.length > 0) {
    connectError.details.push({
      desc: BadRequestSchema,
      value: create(BadRequestSchema, {
        fieldViolations: error.violations.map((v) => ({ field: v.field, description: v.description, reason: v.rule ?? "" })),
      }),
    });
  }
  return connectError;
}

/**
 * The error of a call that ended before its answer did: deadline_exceeded for its deadline, canceled for anything else
 * (never a code its client chose with a reset), with what ended it as the cause.
 */
export function endedCallError(signal: AbortSignal, cause?: unknown): ConnectError {
  const reason: unknown = signal.reason;
  if (reason instanceof ConnectError && reason.code === Code.DeadlineExceeded) return reason;
  // Stryker disable next-line StringLiteral,LogicalOperator: read by nobody — the caller is gone, and the call's log line and metrics keep its code only
  return new ConnectError("the call ended before its answer did", Code.Canceled, undefined, undefined, cause ?? reason);
}

/** What connect-es says when it cannot decode a binary message (its serialization's `parse`). */
const PARSE_BINARY = "parse binary: ";

/** A request message that is no protobuf message of its type: invalid_argument `request.malformed`, with what the reader said (cut short). */
export function undecodableProtobuf(readerMessage: string): DomainError {
  return invalidArgument("request.malformed", `undecodable protobuf request: ${readerMessage.slice(0, 300)}`);
}

/**
 * The one place errors become wire errors. DomainErrors keep their kind, reason, metadata and field
 * violations; ConnectErrors pass with an ErrorInfo added; anything else is a bug: the caller gets
 * `internal` with the request id, the log gets the cause under the same id.
 */
export function toConnectError(error: unknown, requestId: string, logger: Logger): ConnectError {
  if (error instanceof DomainError) return fromDomainError(error);
  // A client or bidi stream's messages are decoded by connect-es as the handler reads them (the transport does not
  // decode them twice: decode-check.ts), and it calls a message it cannot decode internal. Only a server decodes
  // requests, so this is always the caller's message.
  if (error instanceof ConnectError && error.code === Code.Internal && error.rawMessage.startsWith(PARSE_BINARY)) {
    return fromDomainError(undecodableProtobuf(error.rawMessage.slice(PARSE_BINARY.length)));
  }
  if (error instanceof ConnectError && error.code !== Code.Internal && error.code !== Code.Unknown) {
    // Errors the protocol layer raises itself (timeouts, cancellation) get a stable reason too.
    if (error.findDetails(ErrorInfoSchema).length === 0) error.details.push(errorInfo(`rpc.${codeName(error.code)}`, {}));
    return error;
  }
  logger.error({ requestId, err: error }, "internal error");
  return new ConnectError(internalErrorMessage(requestId), Code.Internal, undefined, [errorInfo("internal", { requestId })]);
}

export function createErrorMappingInterceptor(logger: Logger): Interceptor {
  // Promise callbacks rather than an async function: this runs for every call, the no-op included.
  return (next) => (req) => {
    const requestId = req.contextValues.get(requestIdKey);
    return answerOf(next, req).then(
      (res) => (res.stream ? { ...res, message: mappedStream(res.message, req, requestId, logger) } : res),
      (error: unknown) => {
        throw toConnectError(error, requestId, logger);
      },
    );
  };
}

/** A streaming answer's messages, with the error that ends them mapped as any other. */
async function* mappedStream<T>(messages: AsyncIterable<T>, req: AnyRequest, requestId: string, logger: Logger) {
  try {
    yield* messages;
  } catch (error) {
    // A stream whose call ended (its client reset it or went away while an answer was being written) fails
    // with whatever the socket said: that is the call's end, not a fault of the server.
    if (req.signal.aborted && !(error instanceof DomainError) && !(error instanceof ConnectError)) throw endedCallError(req.signal, error);
    throw toConnectError(error, requestId, logger);
  }
}
