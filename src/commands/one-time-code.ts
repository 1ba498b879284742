import type { Deps } from "../context.js";
import { CODE_RULES, type CodeKind, codeDigest, generateCode } from "../domain/codes.js";
import type { NewEvent } from "../events/event.js";
import { EventType } from "../events/types.js";
import type { RowWrite } from "../store/commit.js";

export interface IssuedCode {
  id: string;
  code: string;
  expiresAt: Date;
  write: RowWrite;
  event: NewEvent;
}

/**
 * A new code of `kind` for a user: the row (digest only; it replaces the previous one) and its event. `mailedTo` (the
 * address's key) records where the code goes, so a right code can later prove that address (an init code does).
 */
export function issueCode(deps: Deps, user: { id: string; orgId: string }, kind: CodeKind, at: Date, mailedTo: string | null = null): IssuedCode {
  const id = deps.ids.next();
  const code = generateCode(kind);
  const expiresAt = new Date(at.getTime() + CODE_RULES[kind].lifetimeMs);
  return {
    id,
    code,
    expiresAt,
    write: {
      kind: "code.replace",
      row: { id, userId: user.id, kind, digest: codeDigest(deps.masterKey, kind, id, code), expiresAt: expiresAt.getTime(), attempts: 0, usedAt: null, emailKey: mailedTo },
    },
    // The code itself never enters the log.
    event: { aggregateType: "user", aggregateId: user.id, type: EventType.userCodeAdded, payload: { kind, codeId: id, expiresAt: expiresAt.toISOString() }, resourceOwner: user.orgId },
  };
}
