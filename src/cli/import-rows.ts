import { create, fromJson, type JsonValue } from "@bufbuild/protobuf";
import { createReadStream } from "node:fs";
import { CreateHumanUserRequestSchema, type ImportedHumanUser, ImportedHumanUserSchema } from "../../gen/gatehouse/admin/v1/user_pb.js";
import { createCsvSplitter, csvHeader, csvRecordToJson, RowError } from "./import-csv.js";

export type ImportFormat = "jsonl" | "csv";

/** The key a report line adds to its row (import-report.ts); a row fed back from a report drops it. */
export const REPORT_ERROR_KEY = "importError";

/** Why a row was not sent: found here, before the server saw it, and reported like a server's error. */
export interface RowProblem {
  reason: string;
  message: string;
  field: string;
}

export interface ImportRow {
  /** The row's number in the file, from 1: non-empty lines of JSON Lines, records after the header of CSV. */
  number: number;
  /** The line of the file it starts on. */
  line: number;
  /** The row as JSON: CreateHumanUserRequest's JSON form plus `externalId` (what a report line repeats). */
  json?: Record<string, unknown>;
  /** The row's text, when it is not a JSON object. */
  raw?: string;
  /** The length of its text: what it adds to a request message, about. */
  size: number;
  /** The user to send, or the problem that keeps it from being sent. */
  user?: ImportedHumanUser;
  problem?: RowProblem;
}

/** The user of a row's JSON: CreateHumanUserRequest in its proto3 JSON form (unknown fields refused) plus `externalId`. */
function userOf(json: Record<string, unknown>): ImportedHumanUser {
  const { externalId, ...request } = json;
  if (externalId !== undefined && typeof externalId !== "string") throw new RowError("externalId must be a string", "external_id");
  try {
    const user = fromJson(CreateHumanUserRequestSchema, request as JsonValue);
    return create(ImportedHumanUserSchema, { user, externalId: externalId ?? "" });
  } catch (error) {
    throw new RowError(`not a CreateHumanUserRequest: ${(error as Error).message.slice(0, 300)}`, "row");
  }
}

/** A row from its JSON (a JSON Lines line, a CSV record made JSON), with its user or its problem. */
function rowOf(number: number, line: number, toJson: () => Record<string, unknown>, raw: string): ImportRow {
  let json: Record<string, unknown>;
  try {
    json = toJson();
  } catch (error) {
    // Stryker disable next-line StringLiteral: a guard: parseJsonLine and csvRecordToJson throw only RowErrors
    const field = error instanceof RowError ? error.field : "row";
    return { number, line, raw, size: raw.length, problem: { reason: "row.malformed", message: (error as Error).message, field } };
  }
  try {
    return { number, line, json, size: raw.length, user: userOf(json) };
  } catch (error) {
    return { number, line, json, size: raw.length, problem: { reason: "row.malformed", message: (error as Error).message, field: (error as RowError).field } };
  }
}

function parseJsonLine(text: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new RowError("the line is not JSON", "row");
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new RowError("the line is not a JSON object", "row");
  const { [REPORT_ERROR_KEY]: _reported, ...row } = value as Record<string, unknown>;
  return row;
}

/** The file's text in chunks, read only as fast as they are taken (a stream pauses while nobody reads it). */
async function* chunks(file: string): AsyncGenerator<string> {
  yield* createReadStream(file, { encoding: "utf8", highWaterMark: READ_BYTES }) as AsyncIterable<string>;
}

const READ_BYTES = 256 * 1024;
const LINE_FEED = 0x0a;
const CARRIAGE_RETURN = 0x0d;

interface Line {
  text: string;
  line: number;
}

/**
 * A line's text from its bytes (`end` at its line feed, or the file's end), without a carriage return before that. (An
 * empty line's byte before `end` is the line feed of the line before it, or none: never a carriage return.)
 */
const lineText = (bytes: Buffer, start: number, end: number): string => bytes.toString("utf8", start, bytes[end - 1] === CARRIAGE_RETURN ? end - 1 : end);

/**
 * The lines of the file, numbered from 1, without their line ends: each chunk read yields its whole lines at once, so a
 * line costs no await of its own. Lines are cut at line feed bytes, which UTF-8 never uses inside a character, and
 * each is decoded whole; a line longer than a chunk is gathered from its pieces first. As with String.split, the text
 * after the last line feed is a line too (an empty one when the file ends with a line feed: blank, so no row).
 * (Decoding whole chunks into text, splitting it, and handing on a line at a time through an async generator cost
 * more CPU than parsing each line's JSON: bench/README, "Bulk import".)
 */
async function* lineBatches(file: string): AsyncGenerator<Line[]> {
  let pieces: Buffer[] = [];
  let line = 0;
  const gathered = () => {
    const bytes = Buffer.concat(pieces);
    return { text: lineText(bytes, 0, bytes.length), line: ++line };
  };
  for await (const chunk of createReadStream(file, { highWaterMark: READ_BYTES }) as AsyncIterable<Buffer>) {
    let end = chunk.indexOf(LINE_FEED);
    if (end === -1) {
      pieces.push(chunk);
      continue;
    }
    // The read's first line ends what the reads before it left (a copy of that one line when they left nothing).
    pieces.push(chunk.subarray(0, end));
    const batch: Line[] = [gathered()];
    let start = end + 1;
    for (end = chunk.indexOf(LINE_FEED, start); end !== -1; end = chunk.indexOf(LINE_FEED, start)) {
      batch.push({ text: lineText(chunk, start, end), line: ++line });
      start = end + 1;
    }
    pieces = [chunk.subarray(start)];
    yield batch;
  }
  yield [gathered()];
}

/** The rows of a JSON Lines file: every non-empty line is one. The first `from` are counted, not read. */
async function* jsonLinesRows(file: string, from: number): AsyncGenerator<ImportRow> {
  let number = 0;
  for await (const batch of lineBatches(file)) {
    for (const { text, line } of batch) {
      if (text.trim() === "" || ++number <= from) continue;
      yield rowOf(number, line, () => parseJsonLine(text), text);
    }
  }
}

/** CSV records with the line each starts on. */
async function* csvRecords(file: string): AsyncGenerator<{ record: string[]; line: number }> {
  const splitter = createCsvSplitter();
  let line = 1;
  const numbered = (records: string[][]) =>
    records.map((record) => {
      const start = line;
      line += 1 + record.reduce((breaks, field) => breaks + (field.match(/\n/g)?.length ?? 0), 0);
      return { record, line: start };
    });
  for await (const chunk of chunks(file)) yield* numbered(splitter.push(chunk));
  yield* numbered(splitter.end());
}

/** The rows of a CSV file: the first record is the header, every later non-blank record a row; the first `from` are skipped. */
async function* csvRows(file: string, from: number): AsyncGenerator<ImportRow> {
  let columns: ReturnType<typeof csvHeader> | undefined;
  let number = 0;
  for await (const { record, line } of csvRecords(file)) {
    if (!columns) {
      columns = csvHeader(record);
      continue;
    }
    if ((record.length === 1 && record[0]!.trim() === "") || ++number <= from) continue;
    const known = columns;
    yield rowOf(number, line, () => csvRecordToJson(known, record), record.join(","));
  }
}

/**
 * The rows of an import file after the first `from` (done by an earlier run: they are numbered but not parsed), in
 * order; a CSV header that cannot be mapped throws CsvHeaderError (a usage error).
 */
export function readRows(file: string, format: ImportFormat, from = 0): AsyncGenerator<ImportRow> {
  return format === "csv" ? csvRows(file, from) : jsonLinesRows(file, from);
}

/** How many rows the file has (for the progress bar's total and ETA): a pass over the file that parses nothing. */
export async function countRows(file: string, format: ImportFormat): Promise<number> {
  let count = 0;
  if (format === "csv") {
    for await (const { record } of csvRecords(file)) if (!(record.length === 1 && record[0]!.trim() === "")) count++;
    return Math.max(0, count - 1);
  }
  for await (const batch of lineBatches(file)) for (const { text } of batch) if (text.trim() !== "") count++;
  return count;
}

/** The format of a file named on the command line: `.csv` is CSV, anything else JSON Lines (readRows asks for "csv" only). */
export const formatOf = (file: string): ImportFormat => (file.toLowerCase().endsWith(".csv") ? "csv" : "jsonl");
