import { create, type MessageInitShape } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import {
  type ImportError,
  ImportErrorSchema,
  type ImportedHumanUser,
  ImportedHumanUserSchema,
  ImportHumanUserResultSchema,
  ImportOutcome,
  OnConflict,
  type UserService,
} from "../../../gen/gatehouse/admin/v1/user_pb.js";
import { type ImportItem, type ImportOptions, type ImportResult, startImport } from "../../commands/import-human-users.js";
import type { Deps } from "../../context.js";
import type { DomainError } from "../../domain/errors.js";
import { endedCallError } from "../../interceptors/error-mapping.js";
import { checkMessage, invalidRequest } from "../../interceptors/validation.js";
import { ERROR_DOMAIN } from "../../rest/error-body.js";
import { callerOf } from "../caller.js";
import { humanUserInputOf } from "./human-user-input.js";

type ImportHandlers = Pick<ServiceImpl<typeof UserService>, "importHumanUsers" | "importHumanUsersBatch">;

const USER_PATH = "user.";

/**
 * One user of a request, checked as the validation interceptor checks a CreateHumanUserRequest (the .proto leaves the
 * items to the handler, so a bad one is its own result): trimmed, then its rules. Paths are the user's own, as
 * CreateHumanUser would name them (`profile.first_name`, not `user.profile.first_name`).
 */
function itemOf(imported: ImportedHumanUser): ImportItem {
  const violations = checkMessage(ImportedHumanUserSchema, imported).map((v) => ({ ...v, field: v.field.startsWith(USER_PATH) ? v.field.slice(USER_PATH.length) : v.field }));
  if (violations.length > 0) return { rejected: invalidRequest(violations) };
  return { input: { ...humanUserInputOf(imported.user!), externalId: imported.externalId } };
}

const conflictModes: Record<OnConflict, ImportOptions["onConflict"]> = {
  [OnConflict.UNSPECIFIED]: "fail",
  [OnConflict.FAIL]: "fail",
  [OnConflict.SKIP]: "skip",
  [OnConflict.UPDATE]: "update",
};

const optionsOf = (request: { onConflict: OnConflict; sendInitializationMails: boolean }): ImportOptions => ({
  onConflict: conflictModes[request.onConflict],
  sendInitializationMails: request.sendInitializationMails,
});

const outcomes: Record<ImportResult["outcome"], ImportOutcome> = {
  created: ImportOutcome.CREATED,
  updated: ImportOutcome.UPDATED,
  unchanged: ImportOutcome.UNCHANGED,
  skipped: ImportOutcome.SKIPPED,
  failed: ImportOutcome.FAILED,
};

/** A user's error as the error mapping would put it on the wire (kind, reason, metadata, violations), in the result. */
function importErrorOf(error: DomainError): ImportError {
  return create(ImportErrorSchema, {
    code: error.kind,
    message: error.message,
    errorInfo: { reason: error.reason, domain: ERROR_DOMAIN, metadata: error.metadata },
    // Stryker disable next-line StringLiteral: every violation names its rule (the .proto's, validation.ts's and the domain's checks alike)
    fieldViolations: error.violations.map((v) => ({ field: v.field, description: v.description, reason: v.rule ?? "" })),
  });
}

function resultOf(result: ImportResult): MessageInitShape<typeof ImportHumanUserResultSchema> {
  return {
    index: BigInt(result.index),
    outcome: outcomes[result.outcome],
    ...(result.outcome === "failed" ? { error: importErrorOf(result.error) } : { userId: result.userId }),
  };
}

/**
 * A call that ended (the client went away, its deadline or the stream's lifetime passed) stops its import: the password
 * work it still had queued is dropped (import-passwords.ts), and what that makes fail is the call's end, reported as
 * such (canceled or deadline_exceeded), not as a fault of the server.
 */
export function endedImportError(error: unknown, signal: AbortSignal): unknown {
  // Only a deadline keeps its code. Whatever else ended the call (a client's HTTP/2 reset code, a socket error) says
  // nothing about the server: a client could otherwise pick the code the server reports and logs (internal, say).
  return signal.aborted ? endedCallError(signal) : error;
}

/** ImportHumanUsers and ImportHumanUsersBatch (issue 14): convert each message, import it, convert the results. */
export function createImportHandlers(deps: Deps): ImportHandlers {
  return {
    async *importHumanUsers(requests, context) {
      try {
        // Permission first: a caller without it gets its error before a single message is read.
        const importer = await startImport(deps, callerOf(context), context.signal);
        for await (const request of requests) {
          for await (const chunk of importer.importBatch(request.users.map(itemOf), optionsOf(request))) {
            yield { results: chunk.results.map(resultOf), lastDurableIndex: BigInt(chunk.lastIndex) };
          }
        }
      } catch (error) {
        throw endedImportError(error, context.signal);
      }
    },
    async importHumanUsersBatch(request, context) {
      try {
        const importer = await startImport(deps, callerOf(context), context.signal);
        const results: MessageInitShape<typeof ImportHumanUserResultSchema>[] = [];
        for await (const chunk of importer.importBatch(request.users.map(itemOf), optionsOf(request))) results.push(...chunk.results.map(resultOf));
        return { results };
      } catch (error) {
        throw endedImportError(error, context.signal);
      }
    },
  };
}
