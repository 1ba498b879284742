import { currentPrincipal } from "../access/authenticate.js";
import { selectOrganization } from "../access/select-organization.js";
import type { Caller, Deps } from "../context.js";
import { authorize } from "../domain/authorization.js";
import { DomainError } from "../domain/errors.js";
import { uniquenessKey } from "../domain/names.js";
import { commitAs } from "./commit-as.js";
import { type ChunkEntry, failed, type ImportItem, type ImportOptions, type ImportResult, type ImportScope, planChunk } from "./import-plan.js";

export type { ImportItem, ImportOptions, ImportResult, ImportUserInput, OnConflict } from "./import-plan.js";

/** The results of one chunk, every one of them final and durable; `lastIndex` is its last user's index. */
export interface ImportedChunk {
  results: ImportResult[];
  lastIndex: number;
}

export interface Importer {
  /**
   * Imports the users of one request message, numbered on from the last one this importer saw (a stream counts
   * across its messages), and yields each chunk's results once the chunk is durable, in order.
   */
  importBatch(items: ImportItem[], options: ImportOptions): AsyncGenerator<ImportedChunk>;
}

/**
 * ImportHumanUsers / ImportHumanUsersBatch (issue 14). The organization is selected and `user.write` checked before
 * any user is read, and again, with the caller's rights as they are now, before each message of a stream, the first
 * included: a stream lives for minutes (its first message may come long after its start), and a caller deactivated,
 * locked, stripped of its role or of its token, or whose organization was deactivated meanwhile must not go on
 * importing (the next message ends the stream with the error a new call would get). Then each request message is
 * imported in chunks (importBatch).
 */
export async function startImport(deps: Deps, caller: Caller, signal?: AbortSignal): Promise<Importer> {
  await scopeOf(deps, caller, signal);
  let next = 0;
  return {
    async *importBatch(items, options) {
      // The organization's row is read anew too: the one the call's authentication read is as old as the stream.
      const scope = await scopeOf(deps, { ...caller, principal: await currentPrincipal(deps, caller.principal), ownOrganization: undefined }, signal);
      const first = next;
      next += items.length;
      for (const chunk of chunksOf(items, first)) {
        // A call that ended imports no further chunk (its caller resumes from the last durable index it saw).
        signal?.throwIfAborted();
        yield { results: await importChunk(scope, chunk, options), lastIndex: chunk[chunk.length - 1]!.index };
      }
    },
  };
}

/** The organization the caller imports into, once it holds `user.write` there. */
async function scopeOf(deps: Deps, caller: Caller, signal: AbortSignal | undefined): Promise<ImportScope> {
  const organization = await selectOrganization(deps, caller);
  authorize(caller.principal, "user.write", { orgId: organization.id });
  return { deps, caller, instanceId: caller.principal.instanceId, organization, signal };
}

/**
 * A message's users in chunks: all of them, in order, cut only before a user whose user name (key) or external id an
 * earlier user of the chunk has. So a chunk never holds the same user twice, and the later one, planned after the
 * earlier one is committed, meets it as an existing user under the stream's `on_conflict`.
 */
export function* chunksOf(items: readonly ImportItem[], firstIndex: number): Generator<ChunkEntry[]> {
  let chunk: ChunkEntry[] = [];
  const names = new Set<string>();
  const externalIds = new Set<string>();
  for (const [offset, item] of items.entries()) {
    if ("input" in item) {
      const name = uniquenessKey(item.input.userName);
      const { externalId } = item.input;
      if (names.has(name) || externalIds.has(externalId)) {
        yield chunk;
        chunk = [];
        names.clear();
        externalIds.clear();
      }
      names.add(name);
      if (externalId !== "") externalIds.add(externalId);
    }
    chunk.push({ index: firstIndex + offset, item });
  }
  if (chunk.length > 0) yield chunk;
}

/**
 * Plans a chunk and commits everything it writes in ONE commit (all rows and events), which resolves once durable.
 * A commit refused for a user's sake (a user name taken meanwhile by another call, a user removed meanwhile) is retried
 * as two halves, each planned again (reading what the refusal was about), down to the one user whose commit fails:
 * that user gets the error, every other user its result. Store failures (unavailable) end the import: the caller
 * resumes from the last durable index.
 */
async function importChunk(scope: ImportScope, entries: ChunkEntry[], options: ImportOptions): Promise<ImportResult[]> {
  const at = scope.deps.clock.now();
  const planned = await planChunk(scope, entries, options, at);
  const writes = planned.flatMap((plan) => plan.writes);
  // (Its `false` mutant is equivalent for the same reason; `true`, an import that never commits, is not.)
  // Stryker disable next-line BlockStatement: a commit of nothing writes nothing and waits for durability too; this only skips it
  if (writes.length === 0) {
    // Answers computed from reads wait for those reads' state to be durable, as every answer does.
    await scope.deps.store.durable();
    return planned.map((plan) => plan.result);
  }
  try {
    // Nor is a chunk committed once its call ended while it was being planned: nobody would be told its results.
    scope.signal?.throwIfAborted();
    await commitAs(scope.deps, scope.caller, { writes, events: planned.flatMap((plan) => plan.events) }, at);
  } catch (error) {
    if (!(error instanceof DomainError) || error.kind === "unavailable") throw error;
    if (entries.length === 1) return [failed(entries[0]!.index, error)];
    const half = Math.ceil(entries.length / 2);
    return [...(await importChunk(scope, entries.slice(0, half), options)), ...(await importChunk(scope, entries.slice(half), options))];
  }
  return planned.map((plan) => plan.result);
}
