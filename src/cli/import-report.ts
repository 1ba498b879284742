import { once } from "node:events";
import { createWriteStream, type WriteStream } from "node:fs";
import { REPORT_ERROR_KEY, type ImportRow } from "./import-rows.js";

/** Why a row was rejected, as the report gives it: the server's error of the user, or the row's own problem. */
export interface ReportedError {
  code: string;
  reason: string;
  message: string;
  metadata?: Record<string, string>;
  fieldViolations: { field: string; description: string }[];
}

/**
 * The report of rejected rows: JSON Lines, one per row, each the row itself (its JSON: CreateHumanUserRequest plus
 * `externalId`, also for a CSV row) with `importError` added — so the report can be fixed in place and imported again
 * as it is (the import drops `importError`). A row that was no JSON object has none but `importError.raw`, its text.
 * It holds what the input holds (passwords and hashes too): created for its owner only (0600), and only once a row is
 * rejected. `append` (a resumed run) adds to the report of the run it resumes.
 */
export function createReport(path: string, append: boolean) {
  let stream: WriteStream | undefined;
  let written = 0;
  return {
    async write(row: ImportRow, error: ReportedError): Promise<void> {
      stream ??= createWriteStream(path, { flags: append ? "a" : "w", mode: 0o600 });
      const reported = { row: row.number, line: row.line, ...error, ...(row.json ? {} : { raw: row.raw }) };
      written++;
      if (!stream.write(`${JSON.stringify({ ...row.json, [REPORT_ERROR_KEY]: reported })}\n`)) await once(stream, "drain");
    },
    /** How many rows were reported. */
    count: () => written,
    async close(): Promise<void> {
      if (!stream) return;
      const closing = stream;
      stream = undefined;
      await new Promise<void>((resolve, reject) => closing.end((error?: Error | null) => (error ? reject(error) : resolve())));
    },
  };
}

export type Report = ReturnType<typeof createReport>;
