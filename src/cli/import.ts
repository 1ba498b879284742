import { Code, ConnectError, createClient, type Interceptor } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { readFileSync } from "node:fs";
import { OnConflict, UserService } from "../../gen/gatehouse/admin/v1/user_pb.js";
import { CsvHeaderError } from "./import-csv.js";
import { createProgress, type ImportCounts, type ProgressOutput, summary } from "./import-progress.js";
import { createReport } from "./import-report.js";
import { countRows, formatOf, type ImportFormat, type ImportRow, readRows } from "./import-rows.js";
import { runSession } from "./import-stream.js";

export type ConflictMode = "fail" | "skip" | "update";

export interface ImportCommandOptions {
  file: string;
  url: string;
  tokenFile: string;
  org?: string;
  onConflict: ConflictMode;
  sendInitializationMails: boolean;
  /** Where rejected rows go; default `<file>.rejected.jsonl`. */
  report?: string;
  /** Rows of the file already done (a resumed run starts after them). */
  from: number;
  batchSize: number;
  format?: ImportFormat;
}

/** What a long-running subcommand gets from main.ts, the only module with process side effects. */
export interface CliIo {
  stdout: ProgressOutput;
  stderr: { write(text: string): unknown };
  /** Ctrl-C (SIGINT): called on every one. */
  onInterrupt(listener: () => void): void;
}

/** Exit codes of `gatehouse import`: done (every row imported), failed, some rows rejected, interrupted. */
export const IMPORT_EXIT = { done: 0, failed: 1, usage: 2, rejected: 3, interrupted: 130 } as const;

const conflictModes: Record<ConflictMode, OnConflict> = { fail: OnConflict.FAIL, skip: OnConflict.SKIP, update: OnConflict.UPDATE };

/** The calls' credentials and organization: the token of `--token-file`, `x-service-orgid` from `--org`. */
function headers(token: string, org: string | undefined): Interceptor {
  return (next) => async (req) => {
    req.header.set("authorization", `Bearer ${token}`);
    if (org !== undefined) req.header.set("x-service-orgid", org);
    return next(req);
  };
}

/** The command that goes on from `done`: the same file and server, with a conflict mode that tolerates what is in. */
function resumeCommand(options: ImportCommandOptions, done: number): string {
  const mode = options.onConflict === "fail" ? "skip" : options.onConflict;
  const parts = ["gatehouse import", options.file, "--url", options.url, "--token-file", options.tokenFile];
  if (options.org !== undefined) parts.push("--org", options.org);
  if (options.report !== undefined) parts.push("--report", options.report);
  if (options.sendInitializationMails) parts.push("--send-initialization-mails");
  parts.push("--on-conflict", mode, "--from", String(done));
  return parts.join(" ");
}

/** How a failed stream reads: the server's own words for what it refused, the cause for what broke. */
function describeFailure(error: unknown): string {
  if (error instanceof ConnectError) return `${Code[error.code]}: ${error.rawMessage}`;
  return error instanceof Error ? error.message : String(error);
}

/**
 * `gatehouse import FILE`: reads the file's rows (JSON Lines or CSV), streams them to ImportHumanUsers, shows
 * progress, writes rejected rows to the report and ends with a summary. Ctrl-C once: nothing more is sent, what was
 * sent is finished, and the resume point is printed; twice: it stops at once (the resume point still holds).
 */
export async function runImport(options: ImportCommandOptions, io: CliIo): Promise<number> {
  const format = options.format ?? formatOf(options.file);
  let token: string;
  let total: number;
  let rows: AsyncGenerator<ImportRow>;
  try {
    // Stryker disable next-line MethodExpression: the token goes out in a header, and Headers strip a value's leading and trailing whitespace (the file's newline) anyway
    token = readFileSync(options.tokenFile, "utf8").trim();
    total = await countRows(options.file, format);
    rows = readRows(options.file, format, options.from);
    // The first row now: a CSV header that cannot be mapped is a usage error before anything is sent.
    const first = await rows.next();
    const rest = rows;
    rows = (async function* () {
      if (!first.done) yield first.value;
      yield* rest;
    })();
  } catch (error) {
    // Like every failure of the command: one line on stderr (what is wrong), nothing sent yet.
    io.stderr.write(`gatehouse: ${describeFailure(error)}\n`);
    return error instanceof CsvHeaderError ? IMPORT_EXIT.usage : IMPORT_EXIT.failed;
  }

  const reportPath = options.report ?? `${options.file}.rejected.jsonl`;
  const report = createReport(reportPath, options.from > 0);
  const counts: ImportCounts = { done: Math.min(options.from, total), total, created: 0, updated: 0, unchanged: 0, skipped: 0, rejected: 0 };
  const progress = createProgress(io.stdout, counts.done);
  const abort = new AbortController();
  let interrupts = 0;
  io.onInterrupt(() => {
    interrupts++;
    if (interrupts === 1) io.stderr.write("\nstopping: nothing more is sent; waiting for what was sent (Ctrl-C again to stop at once)\n");
    else abort.abort();
  });

  // Answers uncompressed: the server's CPU is the import's limit, and gzip of every answer would take from it.
  const transport = createGrpcTransport({ baseUrl: options.url, interceptors: [headers(token, options.org)], acceptCompression: [] });
  const client = createClient(UserService, transport);
  const started = performance.now();
  let failure: unknown;
  let end: Awaited<ReturnType<typeof runSession>> | undefined;
  try {
    end = await runSession({
      client,
      rows,
      batchSize: options.batchSize,
      onConflict: conflictModes[options.onConflict],
      sendInitializationMails: options.sendInitializationMails,
      report,
      counts,
      onProgress: () => progress.update(counts),
      stopRequested: () => interrupts > 0,
      abort: abort.signal,
    });
  } catch (error) {
    failure = error;
  }
  await report.close();
  progress.clear();
  io.stdout.write(`${summary(counts, Math.min(options.from, total), (performance.now() - started) / 1000, report.count() > 0 ? reportPath : undefined)}\n`);
  if (end === "complete") return counts.rejected > 0 ? IMPORT_EXIT.rejected : IMPORT_EXIT.done;
  // The resume point: every row up to it is done for good; the rows after it may be imported already, hence SKIP.
  io.stdout.write(`${end === "stopped" ? "stopped" : "not finished"}: rows 1 to ${counts.done} of ${total} are done; resume with:\n  ${resumeCommand(options, counts.done)}\n`);
  if (end === "stopped" || abort.signal.aborted) return IMPORT_EXIT.interrupted;
  io.stderr.write(`gatehouse: the import failed: ${describeFailure(failure)}\n`);
  return IMPORT_EXIT.failed;
}
