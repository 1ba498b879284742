/**
 * The kinds of failure the domain can report. They mirror the gRPC codes a caller acts on; the
 * transport maps them once (src/interceptors/error-mapping.ts).
 */
export type ErrorKind =
  | "invalid_argument"
  | "failed_precondition"
  | "not_found"
  | "already_exists"
  | "permission_denied"
  | "unauthenticated"
  | "aborted"
  | "resource_exhausted"
  | "unavailable";

/** One broken rule of a request field; `field` is the path as the caller wrote it (`profile.first_name`). */
export interface FieldViolation {
  field: string;
  description: string;
  /** Stable id of the broken rule, for example `string.max_len` or `password.policy.digit`. */
  rule?: string;
}

/**
 * An expected failure with a stable reason (`area.condition`, e.g. `user.already_exists`) that
 * clients may branch on. Messages are for humans and may change; reasons may not.
 */
export class DomainError extends Error {
  // Declared, not initialized: assigned in the constructor after its try (see there).
  declare readonly kind: ErrorKind;
  declare readonly reason: string;
  declare readonly metadata: Record<string, string>;
  declare readonly violations: FieldViolation[];

  constructor(kind: ErrorKind, reason: string, message: string, metadata: Record<string, string> = {}, violations: FieldViolation[] = []) {
    // Without a stack (support/stackless.ts, which a constructor's super() cannot be passed to): an expected failure
    // is answered, not debugged, and its reason says where it came from. super() runs in a try so that the limit is
    // restored whatever happens there, as withoutStack does; TypeScript allows that only in a class without parameter
    // properties or initialized fields, hence the assignments below.
    const limit = Error.stackTraceLimit;
    const stackless = Reflect.set(Error, "stackTraceLimit", 0);
    try {
      super(message);
    } finally {
      if (stackless) Error.stackTraceLimit = limit;
    }
    // Stryker disable next-line StringLiteral: only in logs; clients see kind, reason and metadata
    this.name = "DomainError";
    this.kind = kind;
    this.reason = reason;
    this.metadata = metadata;
    this.violations = violations;
  }
}

export const invalidArgument = (reason: string, message: string, violations: FieldViolation[] = [], metadata: Record<string, string> = {}) =>
  new DomainError("invalid_argument", reason, message, metadata, violations);
export const failedPrecondition = (reason: string, message: string, metadata: Record<string, string> = {}) =>
  new DomainError("failed_precondition", reason, message, metadata);
export const notFound = (reason: string, message: string, metadata: Record<string, string> = {}) =>
  new DomainError("not_found", reason, message, metadata);
export const alreadyExists = (reason: string, message: string, metadata: Record<string, string> = {}) =>
  new DomainError("already_exists", reason, message, metadata);
export const permissionDenied = (reason: string, message: string, metadata: Record<string, string> = {}) =>
  new DomainError("permission_denied", reason, message, metadata);
export const unauthenticated = (reason: string, message: string) => new DomainError("unauthenticated", reason, message);
