import { and, desc, eq, sql } from "drizzle-orm";
import type { OutboxClaim, Store } from "../store.js";
import { changesAccess, checkExpectation, type Expectation } from "../commit.js";
import type { PostgresDb, PostgresPools } from "./pg-db.js";
import { toDomainError } from "./pg-errors.js";
import type { createPostgresEventLog } from "./pg-events.js";
import { applyPostgresWrite } from "./pg-writes.js";
import { rowColumns } from "./pg-columns.js";
import { commitCounters, events, masterKeyProbe, outbox } from "./schema/index.js";

/** The sequence of the aggregate's last event (0: it has none), read in the commit's transaction. */
async function lastSequenceOf(tx: Pick<PostgresDb, "select">, expectation: Expectation): Promise<number> {
  const [last] = await tx
    .select({ sequence: events.sequence })
    .from(events)
    .where(and(eq(events.aggregateType, expectation.aggregateType), eq(events.aggregateId, expectation.aggregateId)))
    .orderBy(desc(events.aggregateVersion))
    .limit(1);
  return last?.sequence ?? 0;
}

/**
 * The write side of the PostgreSQL store.
 *
 * Every commit is ONE transaction (READ COMMITTED) whose FIRST statement updates the one row of `commit_counters`,
 * taking `n` sequence numbers for its `n` events. The row lock it takes is held until the transaction ends, so
 * commits are serialized across every replica exactly as SQLite's single writer serializes them:
 * - each statement after the lock sees every commit that finished before it (READ COMMITTED takes a new snapshot per
 *   statement, and the commit ahead released the lock only by finishing), so a conditional write (sqlite-writes.ts'
 *   conditions, the fingerprints, code.claimAttempt's `attempts < max`) judges against all earlier commits and no
 *   commit can change what it read before it ends;
 * - sequence order is commit order and the numbers are gap-free (a rolled-back commit rolls its numbers back too),
 *   so a ListEvents reader paging with `from_sequence` never skips an event that commits later with a lower number —
 *   which a sequence (nextval) taken per event would allow: numbers taken in one order, committed in another.
 * The price is one commit at a time for the whole database, as on SQLite; commits are short (every slow step —
 * hashing, sealing — happens before), and reads never wait for them: they run outside transactions on a pool of their
 * own, while a process's commits queue for its small commit pool (pg-db.ts) rather than for the database's lock.
 *
 * The same statement bumps `access_version` when the commit `changesAccess`: every replica's principal cache reads it
 * (`accessVersion()`, one primary-key read) and drops its entries once it moved — a change on one replica is obeyed
 * by the very next call on every other.
 *
 * `durable()` resolves at once: PostgreSQL acknowledges a COMMIT only once its WAL is flushed (synchronous_commit on,
 * the default, which Gatehouse expects), so whatever a commit returned is durable already.
 */
export function createPostgresCommits(
  pools: PostgresPools,
  db: PostgresDb,
  commitDb: PostgresDb,
  eventLog: ReturnType<typeof createPostgresEventLog>,
): Pick<Store, "commit" | "durable" | "accessVersion" | "setMasterKeyProbe" | "claimDueOutbox" | "releaseOutboxClaims" | "pruneFinishedOutbox" | "close"> {
  let closing: Promise<void> | undefined;
  return {
    async commit(commit) {
      try {
        return await commitDb.transaction(async (tx) => {
          const taken = commit.events.length;
          const [counters] = await tx
            .update(commitCounters)
            .set({
              lastSequence: sql`${commitCounters.lastSequence} + ${taken}`,
              ...(changesAccess(commit) ? { accessVersion: sql`${commitCounters.accessVersion} + 1` } : {}),
            })
            .where(eq(commitCounters.id, 1))
            .returning({ lastSequence: commitCounters.lastSequence });
          if (!counters) throw new Error("commit_counters has no row: the database was not migrated by Gatehouse");
          // After the lock, before any write: serialized with every other commit, like the conditions of the writes.
          if (commit.expect) checkExpectation(commit.expect, await lastSequenceOf(tx, commit.expect));
          for (const write of commit.writes) await applyPostgresWrite(tx, write);
          return eventLog.append(tx, commit.events, counters.lastSequence - taken + 1, { instanceId: commit.instanceId, actor: commit.actor, at: commit.at });
        });
      } catch (error) {
        throw toDomainError(error);
      }
    },
    async durable() {},
    // One counter for every principal, a user's too: replicas would otherwise need a version per user in the database.
    async accessVersion() {
      const [row] = await db.select({ version: commitCounters.accessVersion }).from(commitCounters).where(eq(commitCounters.id, 1));
      return String(row?.version);
    },
    async setMasterKeyProbe(sealed) {
      await commitDb.insert(masterKeyProbe).values({ id: 1, sealed }).onConflictDoNothing();
    },
    // Not a commit: no events, no sequence, so it does not queue behind the commit lock; the row locks it takes are
    // what keeps two workers (and a worker's outcome write) apart.
    async claimDueOutbox(claim) {
      const claimed = await commitDb
        .update(outbox)
        .set({ claimedBy: claim.owner, claimedUntil: claim.now + claim.leaseMs })
        .where(sql`${outbox.id} IN (${claimableOutbox(claim)})`)
        .returning({ ...rowColumns(outbox), position: outbox.position });
      return claimed.sort((a, b) => a.position - b.position).map(({ position: _position, ...row }) => row);
    },
    async releaseOutboxClaims(owner) {
      await commitDb
        .update(outbox)
        .set({ claimedBy: null, claimedUntil: null })
        .where(and(eq(outbox.claimedBy, owner), eq(outbox.status, "pending")));
    },
    // Not a commit, like a claim: replicas sweeping at once skip each other's rows (SKIP LOCKED) instead of waiting.
    async pruneFinishedOutbox(filter) {
      const deleted = await commitDb
        .delete(outbox)
        .where(
          sql`${outbox.id} IN (SELECT id FROM outbox WHERE status IN ('sent', 'failed') AND created_at < ${filter.queuedBefore} ORDER BY status, created_at LIMIT ${filter.limit} FOR UPDATE SKIP LOCKED)`,
        )
        .returning({ id: outbox.id });
      return deleted.length;
    },
    close() {
      // Once: a store may be closed twice (an error path and the stop), and pg refuses a second end().
      closing ??= Promise.all([pools.reads.end(), pools.commits.end()]).then(() => undefined);
      return closing;
    },
  };
}

/** A message row `alias` still queued for delivery: pending, and not parked as copied when the claim skips those. */
const queued = (alias: string, claim: OutboxClaim) =>
  claim.skipCopied ? sql`${sql.raw(alias)}.status = 'pending' AND ${sql.raw(alias)}.copied_at IS NULL` : sql`${sql.raw(alias)}.status = 'pending'`;

/** A message row `alias` that `owner` may claim at `now` (see `Store.claimDueOutbox`), status aside. */
const heldByNobodyElse = (alias: string, claim: OutboxClaim) =>
  sql`${sql.raw(alias)}.next_attempt_at <= ${claim.now} AND (${sql.raw(alias)}.claimed_until IS NULL OR ${sql.raw(alias)}.claimed_until <= ${claim.now} OR ${sql.raw(alias)}.claimed_by = ${claim.owner})`;

/**
 * The ids of the messages a claim takes: pending, due, held by nobody else, with no older pending message of the same
 * user that is not (a user's queue stops at the first one that is not yet due or held by another worker), the oldest
 * first, at most `limit`, each row locked FOR UPDATE SKIP LOCKED: a message another worker is claiming right now is
 * skipped, not waited for, and one whose claim committed meanwhile is judged again on its new version (READ
 * COMMITTED), so it is never claimed twice. A row skipped that way may be an older message of a user whose newer one
 * was locked: `kept` drops every message whose user has an older pending one outside this claim, so a worker never
 * holds a user's newer message while another may hold an older one.
 */
function claimableOutbox(claim: OutboxClaim) {
  return sql`WITH candidates AS MATERIALIZED (
    SELECT m.id, m.user_id, m.position FROM outbox m WHERE ${queued("m", claim)} AND ${heldByNobodyElse("m", claim)} AND NOT EXISTS (
      SELECT 1 FROM outbox o WHERE o.user_id = m.user_id AND ${queued("o", claim)} AND o.position < m.position AND NOT (${heldByNobodyElse("o", claim)})
    ) ORDER BY m.position LIMIT ${claim.limit} FOR UPDATE OF m SKIP LOCKED
  )
  SELECT c.id FROM candidates c WHERE NOT EXISTS (
    SELECT 1 FROM outbox o WHERE o.user_id = c.user_id AND ${queued("o", claim)} AND o.position < c.position AND o.id NOT IN (SELECT id FROM candidates)
  )`;
}
