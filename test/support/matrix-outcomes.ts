import { Code } from "@connectrpc/connect";
import type { Answer } from "./matrix-call.js";
import type { RequestBuilder } from "./matrix-requests.js";
import type { Column } from "./matrix-world.js";

/**
 * What a cell expects. `allowed`: the permission check passed, whatever the operation then answered
 * (ok, not_found, already_exists, failed_precondition …), except permission_denied, unauthenticated
 * and internal. `privileged`: permission_denied with reason `principal.privileged` (the privilege
 * ceiling). `not_found`: the caller acts in its own organization, where the target is not.
 */
export type Outcome = "allowed" | "denied" | "privileged" | "unauthenticated" | "not_found";

/** One row of the matrix: an RPC (or a variant of its target) and who may call it. */
export interface Row {
  /** `package.Service/Method` as in the generated descriptors. */
  rpc: string;
  variant?: string;
  /** Whether the RPC changes state: viewers never hold such a cell. */
  write: boolean;
  request: RequestBuilder;
  /** Columns that pass the permission check; all other role columns are denied. */
  allowed: readonly Column[];
  privileged?: readonly Column[];
  notFound?: readonly Column[];
  /**
   * The target user calling about itself; absent where the row has no target user. `unauthenticated`
   * where the target is inactive or locked, so its own token is refused.
   */
  self?: "allowed" | "denied" | "unauthenticated";
  /** Health and reflection answer everyone, without a token. */
  isPublic?: boolean;
}

export function rowLabel(row: Row): string {
  return row.variant ? `${row.rpc} [${row.variant}]` : row.rpc;
}

/** The outcome the contract gives `column` in `row`; undefined when the column does not apply. */
export function expectedOutcome(row: Row, column: Column): Outcome | undefined {
  if (column === "self") return row.self;
  if (row.isPublic) return "allowed";
  if (column === "anonymous") return "unauthenticated";
  if (row.allowed.includes(column)) return "allowed";
  if (row.privileged?.includes(column)) return "privileged";
  if (row.notFound?.includes(column)) return "not_found";
  return "denied";
}

const notPastTheCheck = new Set<Code | "ok">([Code.PermissionDenied, Code.Unauthenticated, Code.Internal, Code.Unknown]);

export function answerMatches(outcome: Outcome, answer: Answer): boolean {
  switch (outcome) {
    case "allowed":
      return !notPastTheCheck.has(answer.code);
    case "denied":
      return answer.code === Code.PermissionDenied;
    case "privileged":
      return answer.code === Code.PermissionDenied && answer.reason === "principal.privileged";
    case "unauthenticated":
      return answer.code === Code.Unauthenticated;
    case "not_found":
      return answer.code === Code.NotFound;
  }
}
