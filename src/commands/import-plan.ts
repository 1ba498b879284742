import { requireCeilingOver } from "../access/privilege-ceiling.js";
import type { Caller, Deps } from "../context.js";
import { DomainError, failedPrecondition, invalidArgument } from "../domain/errors.js";
import type { NewEvent } from "../events/event.js";
import type { RowWrite } from "../store/commit.js";
import { uniqueViolation } from "../store/db-errors.js";
import type { OrganizationRow, UserRow } from "../store/rows.js";
import { type CheckedHumanUser, type CreateHumanUserInput, checkHumanUser, lookUpForHumanUsers, newHumanUser } from "./human-user.js";
import { hashImportedPassword } from "./import-passwords.js";
import { reimportedPasswordHash, reimportOf } from "./import-update.js";

/** What ImportHumanUsers does with a user whose user name or external id is taken (see the .proto). */
export type OnConflict = "fail" | "skip" | "update";

export interface ImportOptions {
  onConflict: OnConflict;
  sendInitializationMails: boolean;
}

/** One imported user: exactly CreateHumanUser's input, and the importer's own id for it ("" when none). */
export interface ImportUserInput extends CreateHumanUserInput {
  externalId: string;
}

/** One user as the transport hands it in: its input, or the error the checks of its message (the .proto's rules) gave. */
export type ImportItem = { input: ImportUserInput } | { rejected: DomainError };

/** What became of one user: its position in the stream, and its user or its error. */
export type ImportResult = { index: number } & ({ outcome: "created" | "updated" | "unchanged" | "skipped"; userId: string } | { outcome: "failed"; error: DomainError });

/** An import's fixed frame: who imports, into which organization (chosen and authorized once, at its start). */
export interface ImportScope {
  deps: Deps;
  caller: Caller;
  instanceId: string;
  organization: OrganizationRow;
  /** The import call's signal: once the call is over, its password work still waiting is dropped. */
  signal?: AbortSignal;
}

export interface ChunkEntry {
  index: number;
  item: ImportItem;
}

/** One user of a chunk once planned: its result already, or what to commit for it and the result once committed. */
export interface Planned {
  result: ImportResult;
  writes: RowWrite[];
  events: NewEvent[];
}

export const failed = (index: number, error: DomainError): ImportResult => ({ index, outcome: "failed", error });

/** A user's own failure goes into its result; anything else (the store unavailable, a bug) stops the import. */
function ownFailure(error: unknown): DomainError {
  if (error instanceof DomainError && error.kind !== "unavailable") return error;
  throw error;
}

/** The import's own rule on top of CreateHumanUser's: a passwordless registration link is for one person, not a bulk. */
function checkImportable(input: ImportUserInput): void {
  if (input.requestPasswordlessRegistration) {
    throw invalidArgument("import.passwordless_unsupported", "an import cannot hand out passwordless registration links; create such a user with CreateHumanUser", [
      { field: "request_passwordless_registration", description: "is not supported by an import", rule: "import.passwordless_unsupported" },
    ]);
  }
}

/** The existing user a checked user runs into, and how it was found; or the error that makes it no user to act on. */
type Conflict = { kind: "none" } | { kind: "same"; user: UserRow; byExternalId: boolean } | { kind: "refused"; error: DomainError };

/**
 * SKIP and UPDATE act only on the importer's own user: a human of the selected organization whose external id, if it
 * has one, is the one given. Anyone else holding the user name is a plain conflict (already_exists, as for
 * CreateHumanUser); a user found by external id under another user name is not renamed (`import.user_name_differs`).
 */
function conflictOf(scope: ImportScope, checked: CheckedHumanUser, externalId: string, byName: Map<string, UserRow>, byExternalId: Map<string, UserRow>): Conflict {
  const named = byName.get(checked.userNameKey);
  // No stored external id is empty (none is stored as null): "" finds nobody.
  const identified = byExternalId.get(externalId);
  if (identified) {
    if (named && named.id !== identified.id) return { kind: "refused", error: uniqueViolation("users_user_name_key")! };
    // Stryker disable next-line StringLiteral: planChunk treats every kind but "none" and "refused" as the same user
    if (!named) return { kind: "same", user: identified, byExternalId: true };
    // Stryker disable next-line StringLiteral: as above
    return { kind: "same", user: identified, byExternalId: false };
  }
  if (!named) return { kind: "none" };
  // Found by user name only: had its external id been the one given, it would have been found by that.
  const own = named.orgId === scope.organization.id && named.type === "human" && (named.externalId === null || externalId === "");
  // Stryker disable next-line StringLiteral: planChunk treats every kind but "none" and "refused" as the same user
  if (own) return { kind: "same", user: named, byExternalId: false };
  return { kind: "refused", error: uniqueViolation("users_user_name_key")! };
}

/** The answer to an existing own user under FAIL and SKIP, or undefined for UPDATE (which plans a re-import). */
function existingAnswer(index: number, conflict: Extract<Conflict, { kind: "same" }>, options: ImportOptions): ImportResult | undefined {
  const { user, byExternalId } = conflict;
  if (options.onConflict === "fail") return failed(index, uniqueViolation(byExternalId ? "users_external_id" : "users_user_name_key")!);
  if (byExternalId) {
    return failed(
      index,
      failedPrecondition("import.user_name_differs", `the user with this external id has another user name (${user.userName}); an import does not rename users`, { userId: user.id }),
    );
  }
  return options.onConflict === "skip" ? { index, outcome: "skipped", userId: user.id } : undefined;
}

interface ToCreate {
  index: number;
  checked: CheckedHumanUser;
  externalId: string;
}

interface ToUpdate extends ToCreate {
  user: UserRow;
}

/**
 * Plans a chunk: reads what its checks need (once for the chunk), checks each user exactly as CreateHumanUser does,
 * finds the existing users (one read), decides each conflict, does the password work (concurrently, bounded), checks
 * the privilege ceiling over every user a re-import changes, and builds the writes and events. No user's failure stops
 * the others: each lands in its own result.
 */
export async function planChunk(scope: ImportScope, entries: ChunkEntry[], options: ImportOptions, at: Date): Promise<Planned[]> {
  const { deps, instanceId, organization } = scope;
  const inputs = entries.flatMap((entry) => ("input" in entry.item ? [entry.item.input] : []));
  const lookups = await lookUpForHumanUsers(deps, instanceId, organization.id, inputs);
  const planned = new Map<number, Planned>();
  const decide = (result: ImportResult) => planned.set(result.index, { result, writes: [], events: [] });
  const checkedUsers: ToCreate[] = [];
  for (const { index, item } of entries) {
    if ("rejected" in item) {
      decide(failed(index, item.rejected));
      continue;
    }
    try {
      const checked = checkHumanUser(item.input, lookups);
      checkImportable(item.input);
      checkedUsers.push({ index, checked, externalId: item.input.externalId });
    } catch (error) {
      decide(failed(index, ownFailure(error)));
    }
  }

  const matches = await deps.store.findUsersByNameKeysOrExternalIds({
    instanceId,
    userNameKeys: checkedUsers.map((user) => user.checked.userNameKey),
    orgId: organization.id,
    // Only the ids given: asking for "" would find nobody (no stored external id is empty), so the `true` mutant here is
    // equivalent, like the non-empty list for nothing below.
    externalIds: checkedUsers.flatMap((user) =>
      // Stryker disable next-line StringLiteral: as above
      user.externalId !== ""
        ? [user.externalId]
        : // Stryker disable next-line ArrayDeclaration: as above
          [],
    ),
  });
  const byName = new Map(matches.map((user) => [user.userNameKey, user]));
  const byExternalId = new Map(matches.flatMap((user) => (user.externalId !== null && user.orgId === organization.id ? [[user.externalId, user] as const] : [])));
  const creates: ToCreate[] = [];
  const updates: ToUpdate[] = [];
  for (const user of checkedUsers) {
    const conflict = conflictOf(scope, user.checked, user.externalId, byName, byExternalId);
    if (conflict.kind === "none") creates.push(user);
    else if (conflict.kind === "refused") decide(failed(user.index, conflict.error));
    else {
      const answer = existingAnswer(user.index, conflict, options);
      if (answer) decide(answer);
      else updates.push({ ...user, user: conflict.user });
    }
  }

  // newHumanUser only builds rows from an input checkHumanUser passed: whatever a user's input can break was refused there.
  const created = (create: ToCreate, passwordHash: string | null) => {
    const context = { instanceId, organization, at, mails: options.sendInitializationMails, externalId: create.externalId || null };
    const user = newHumanUser(deps, context, create.checked, passwordHash);
    planned.set(create.index, { result: { index: create.index, outcome: "created", userId: user.userId }, writes: user.writes, events: user.events });
  };
  // Imported hashes (the bulk of a migration) need no await; plain passwords are hashed concurrently, bounded.
  // (A plain-password user planned here too would be planned again once its hash is made, same index: the `true` mutant
  // is equivalent, only the wasted work would tell.)
  for (const create of creates) if (!create.checked.input.password) created(create, create.checked.input.hashedPassword ?? null);
  await Promise.all([
    ...creates.flatMap((create) => {
      const { password } = create.checked.input;
      // Stryker disable next-line ArrayDeclaration: what else Promise.all is given for a user without a password is not awaited work
      if (!password) return [];
      return [
        hashImportedPassword(password, scope.signal).then(
          (hash) => created(create, hash),
          // Stryker disable next-line ArrowFunction: hashing fails only when the call ended (its signal), and then the import ends with the call's own error
          (error: unknown) => void decide(failed(create.index, ownFailure(error))),
        ),
      ];
    }),
    ...updates.map(async (update) => {
      try {
        planned.set(update.index, await planReimport(scope, update));
      } catch (error) {
        decide(failed(update.index, ownFailure(error)));
      }
    }),
  ]);
  return entries.map((entry) => planned.get(entry.index)!);
}

/**
 * UPDATE of an own existing user: nothing when it has every value; else the privilege ceiling, then the re-import. A
 * plain password is verified against the stored hash, and the answer (UNCHANGED or UPDATED) tells whether it is the
 * user's: the ceiling comes first then, so no importer can test guesses at the password of a user above it.
 */
async function planReimport(scope: ImportScope, update: ToUpdate): Promise<Planned> {
  const { index, user, checked, externalId } = update;
  // Changing a user is acting on its credentials and identity: the importer must hold everything it holds.
  let ceiling: Promise<string | undefined> | undefined;
  const checkCeiling = () => (ceiling ??= requireCeilingOver(scope.deps, scope.caller, user));
  if (checked.input.password) await checkCeiling();
  const reimport = reimportOf(user, checked, externalId, await reimportedPasswordHash(user, checked, scope.signal));
  if (!reimport) return { result: { index, outcome: "unchanged", userId: user.id }, writes: [], events: [] };
  const checkedMemberships = await checkCeiling();
  // (Equivalent here: a re-import's other writes are code.void, which has no checkedMemberships, and an undefined one is
  // none; so the `true` mutants survive, their `false` siblings do not.)
  // Stryker disable next-line LogicalOperator: as above
  const writes = reimport.writes.map((write) => (write.kind === "user.importUpdate" && checkedMemberships !== undefined ? { ...write, checkedMemberships } : write));
  return { result: { index, outcome: "updated", userId: user.id }, writes, events: [reimport.event] };
}
