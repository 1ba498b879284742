import { create } from "@bufbuild/protobuf";
import type { Client } from "@connectrpc/connect";
import {
  type ImportedHumanUser,
  type ImportHumanUserResult,
  ImportHumanUsersRequestSchema,
  ImportOutcome,
  OnConflict,
  type UserService,
} from "../../gen/gatehouse/admin/v1/user_pb.js";
import type { ImportCounts } from "./import-progress.js";
import type { Report } from "./import-report.js";
import type { ImportRow } from "./import-rows.js";

/** Request messages sent and not yet answered: enough to keep the server busy while an answer travels, no more. */
const MESSAGES_IN_FLIGHT = 4;
/** A message's rows' text at most (the server takes up to 4 MiB, encoded; encoded is smaller than the text). */
const MESSAGE_TEXT_BYTES = 1024 * 1024;
/**
 * Plain passwords in one message at most: the server hashes them (argon2id, ~50 ms of a core each) before it commits the
 * message, so a message of a thousand would keep the connection silent for half a minute (and the server's idle
 * timeout might end it); a few dozen keep every core busy and the answers coming.
 */
const PLAIN_PASSWORDS_PER_MESSAGE = 64;
/** Rows read for one message at most, rejected ones included: reading stays bounded even in a run of bad rows. */
const ROWS_PER_MESSAGE_READ = 10;
/** Streams in a row that the server ended without answering anything: then the import gives up. */
const FRUITLESS_STREAMS = 3;

export interface SessionOptions {
  client: Client<typeof UserService>;
  rows: AsyncIterator<ImportRow>;
  /** Users per request message, 1 to 1 000. */
  batchSize: number;
  onConflict: OnConflict;
  sendInitializationMails: boolean;
  report: Report;
  /** Kept up to date as results come in; `done` is the resume point (every row up to it is done). */
  counts: ImportCounts;
  onProgress(): void;
  /** The first Ctrl-C: send nothing more, let what was sent finish. */
  stopRequested(): boolean;
  /** The second Ctrl-C: give up at once. */
  abort: AbortSignal;
}

export type SessionEnd = "complete" | "stopped";

/** A row read, in file order, until it is done: rejected here, or answered by the server. */
interface Entry {
  row: ImportRow;
  /** Sent and not answered yet (in the current stream, or in one that ended: then it is sent again). */
  pending: boolean;
}

const outcomeCounts: Partial<Record<ImportOutcome, keyof ImportCounts>> = {
  [ImportOutcome.CREATED]: "created",
  [ImportOutcome.UPDATED]: "updated",
  [ImportOutcome.UNCHANGED]: "unchanged",
  [ImportOutcome.SKIPPED]: "skipped",
};

/**
 * Streams the rows to ImportHumanUsers: each non-rejected row goes in a request message of up to `batchSize` users,
 * at most MESSAGES_IN_FLIGHT messages ahead of the answers (the file is read only as fast as the server imports).
 * A stream the server ends early (its stream lifetime) is continued in a new one, which sends first the users the
 * old one did not answer — with ON_CONFLICT_SKIP when the import's is FAIL, since they may have been imported already.
 * `counts.done` is the resume point: the number of rows from the file's first that are done for good. Errors of the
 * stream (the server unreachable or gone, the token refused) are thrown; the caller reports `counts.done`.
 */
export async function runSession(options: SessionOptions): Promise<SessionEnd> {
  const { counts, report } = options;
  const queue: Entry[] = [];
  let exhausted = false;
  let fruitless = 0;

  /** Rows at the head of the queue that are done leave it; the last one's number is the resume point. */
  const settle = () => {
    while (queue.length > 0 && !queue[0]!.pending) counts.done = queue.shift()!.row.number;
  };
  const reject = async (row: ImportRow, error: Parameters<Report["write"]>[1]) => {
    counts.rejected++;
    await report.write(row, error);
  };

  /** Reads rows for one message: up to `batchSize` users; rejected rows go to the report on the way. */
  async function readBatch(): Promise<Entry[]> {
    const batch: Entry[] = [];
    let bytes = 0;
    let passwords = 0;
    const full = () => batch.length >= options.batchSize || bytes >= MESSAGE_TEXT_BYTES || passwords >= PLAIN_PASSWORDS_PER_MESSAGE;
    for (let read = 0; !full() && read < options.batchSize * ROWS_PER_MESSAGE_READ; read++) {
      const next = await options.rows.next();
      if (next.done) {
        exhausted = true;
        break;
      }
      const row = next.value;
      if (!row.user) {
        queue.push({ row, pending: false });
        const problem = row.problem!;
        await reject(row, { code: "invalid_argument", reason: problem.reason, message: problem.message, fieldViolations: [{ field: problem.field, description: problem.message }] });
        continue;
      }
      const entry = { row, pending: true };
      queue.push(entry);
      batch.push(entry);
      bytes += row.size;
      if (row.user.user?.password) passwords++;
    }
    return batch;
  }

  async function record(entry: Entry | undefined, result: ImportHumanUserResult): Promise<void> {
    // Stryker disable next-line ConditionalExpression: the server answers each index it was sent exactly once
    if (!entry) return;
    entry.pending = false;
    const counted = outcomeCounts[result.outcome];
    if (counted) counts[counted]++;
    else {
      const error = result.error;
      await reject(entry.row, {
        code: error?.code ?? "unknown",
        reason: error?.errorInfo?.reason ?? "",
        message: error?.message ?? "",
        ...(error?.errorInfo && Object.keys(error.errorInfo.metadata).length > 0 ? { metadata: error.errorInfo.metadata } : {}),
        fieldViolations: (error?.fieldViolations ?? []).map((v) => ({ field: v.field, description: v.description })),
      });
    }
  }

  /** One stream: "done" when it answered everything it was sent and nothing is left to send; else "cut". */
  async function stream(): Promise<"done" | "cut"> {
    const sent = new Map<number, Entry>();
    const unanswered: number[] = [];
    let nextIndex = 0;
    let over = false;
    let wake = () => {};
    let answered = 0;
    const resend = queue.filter((entry) => entry.pending);

    async function* requests() {
      let resent = 0;
      while (!over && !options.stopRequested()) {
        while (unanswered.length >= MESSAGES_IN_FLIGHT && !over) await new Promise<void>((resolve) => (wake = resolve));
        if (over || options.stopRequested()) return;
        const again = resent < resend.length;
        const batch = again ? resend.slice(resent, resent + options.batchSize) : exhausted ? [] : await readBatch();
        resent += again ? batch.length : 0;
        if (batch.length === 0) return;
        const users: ImportedHumanUser[] = [];
        for (const entry of batch) {
          sent.set(nextIndex++, entry);
          users.push(entry.row.user!);
        }
        unanswered.push(nextIndex - 1);
        // Users a cut stream did not answer may be imported already: FAIL would report them as conflicts.
        const onConflict = again && options.onConflict === OnConflict.FAIL ? OnConflict.SKIP : options.onConflict;
        yield create(ImportHumanUsersRequestSchema, { users, onConflict, sendInitializationMails: options.sendInitializationMails });
      }
    }

    try {
      for await (const response of options.client.importHumanUsers(requests(), { signal: options.abort })) {
        for (const result of response.results) {
          const index = Number(result.index);
          await record(sent.get(index), result);
          sent.delete(index);
          answered++;
        }
        const last = Number(response.lastDurableIndex);
        while (unanswered.length > 0 && unanswered[0]! <= last) unanswered.shift();
        settle();
        options.onProgress();
        wake();
      }
    } finally {
      over = true;
      wake();
    }
    fruitless = answered > 0 ? 0 : fruitless + 1;
    return sent.size === 0 && (exhausted || options.stopRequested()) ? "done" : "cut";
  }

  for (;;) {
    if ((await stream()) === "done") {
      settle();
      return exhausted && queue.length === 0 ? "complete" : "stopped";
    }
    if (fruitless >= FRUITLESS_STREAMS) throw new Error(`the server ended ${FRUITLESS_STREAMS} streams in a row without answering any user`);
  }
}
