import { create } from "@bufbuild/protobuf";
import type { Client } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import {
  CreateHumanUserRequestSchema,
  type ImportHumanUsersRequest,
  ImportHumanUsersResponseSchema,
  ImportOutcome,
  ImportedHumanUserSchema,
  OnConflict,
  type UserService,
} from "../../../gen/gatehouse/admin/v1/user_pb.js";
import type { ImportCounts } from "../../../src/cli/import-progress.js";
import type { Report } from "../../../src/cli/import-report.js";
import type { ImportRow } from "../../../src/cli/import-rows.js";
import { runSession } from "../../../src/cli/import-stream.js";

/**
 * How `gatehouse import` talks to ImportHumanUsers (src/cli/import-stream.ts), against a stand-in server: what each
 * request message holds, where the resume point stands, and what a stream the server ends early is followed by.
 */

/** Rows 1..n, each a user (with a plain password when asked), or rejected before sending when `bad` names it. */
function rows(n: number, options: { password?: boolean; bad?: number[] } = {}): ImportRow[] {
  return Array.from({ length: n }, (_, i) => {
    const number = i + 1;
    if (options.bad?.includes(number)) return { number, line: number, size: 5, raw: "{ bad", problem: { reason: "row.malformed", message: "the line is not JSON", field: "row" } };
    const user = create(CreateHumanUserRequestSchema, { userName: `u${number}`, ...(options.password ? { password: "Pw-1234-ab!" } : {}) });
    return { number, line: number, size: 100, json: { userName: `u${number}` }, user: create(ImportedHumanUserSchema, { user }) };
  });
}

interface Received {
  stream: number;
  names: string[];
  onConflict: OnConflict;
}

/**
 * A stand-in server: answers each message as one chunk (all created), and after `cutAfter` messages of a stream (when
 * given) ends that stream without answering the last one.
 */
function standIn(cutAfter?: number, failed: Record<string, Record<string, unknown> | "without an error"> = {}) {
  const received: Received[] = [];
  let streams = 0;
  const client = {
    async *importHumanUsers(requests: AsyncIterable<ImportHumanUsersRequest>) {
      const stream = ++streams;
      let next = 0;
      let messages = 0;
      for await (const request of requests) {
        received.push({ stream, names: request.users.map((u) => u.user!.userName), onConflict: request.onConflict });
        if (cutAfter !== undefined && stream === 1 && ++messages === cutAfter) return;
        const results = request.users.map((u) => {
          const error = failed[u.user!.userName];
          if (error === undefined) return { index: BigInt(next++), outcome: ImportOutcome.CREATED, userId: "id" };
          return { index: BigInt(next++), outcome: ImportOutcome.FAILED, ...(error === "without an error" ? {} : { error }) };
        });
        yield create(ImportHumanUsersResponseSchema, { results, lastDurableIndex: BigInt(next - 1) });
      }
    },
  };
  return { client: client as unknown as Client<typeof UserService>, received };
}

function session(input: ImportRow[], client: Client<typeof UserService>, options: { batchSize?: number; stopAfter?: number } = {}) {
  const reported: number[] = [];
  const errors: unknown[] = [];
  const report = {
    write: async (row: ImportRow, error: unknown) => {
      reported.push(row.number);
      errors.push(error);
    },
    count: () => reported.length,
    close: async () => {},
  } as unknown as Report;
  const counts: ImportCounts = { done: 0, total: input.length, created: 0, updated: 0, unchanged: 0, skipped: 0, rejected: 0 };
  let progress = 0;
  const ended = runSession({
    client,
    rows: (async function* () {
      yield* input;
    })(),
    batchSize: options.batchSize ?? 1000,
    onConflict: OnConflict.FAIL,
    sendInitializationMails: false,
    report,
    counts,
    onProgress: () => void progress++,
    stopRequested: () => options.stopAfter !== undefined && progress >= options.stopAfter,
    abort: new AbortController().signal,
  });
  return { ended, counts, reported, errors };
}

describe("request messages", () => {
  it("hold at most batch-size users, and at most 64 plain passwords", async () => {
    const hashed = standIn();
    await session(rows(2500), hashed.client, { batchSize: 1000 }).ended;
    expect(hashed.received.map((r) => r.names.length)).toEqual([1000, 1000, 500]);
    const plain = standIn();
    const { ended, counts } = session(rows(150, { password: true }), plain.client, { batchSize: 1000 });
    expect(await ended).toBe("complete");
    expect(plain.received.map((r) => r.names.length)).toEqual([64, 64, 22]);
    expect(counts).toMatchObject({ done: 150, created: 150 });
  });

  it("leave rejected rows out, report them, and count them done in file order", async () => {
    const server = standIn();
    const { ended, counts, reported, errors } = session(rows(10, { bad: [1, 4, 10] }), server.client, { batchSize: 3 });
    expect(await ended).toBe("complete");
    expect(server.received.flatMap((r) => r.names)).toEqual(["u2", "u3", "u5", "u6", "u7", "u8", "u9"]);
    expect(reported).toEqual([1, 4, 10]);
    expect(counts).toMatchObject({ done: 10, created: 7, rejected: 3 });
    // Each with the row's own problem, as a typed error the report can be read by, like the server's.
    expect(errors[0]).toEqual({
      code: "invalid_argument",
      reason: "row.malformed",
      message: "the line is not JSON",
      fieldViolations: [{ field: "row", description: "the line is not JSON" }],
    });
  });

  it("hold about a megabyte of row text at most, whatever the batch size", async () => {
    // Rows of 256 KiB: the fourth makes a message's text exactly 1 MiB, and the message full.
    const server = standIn();
    const big = rows(10).map((row) => ({ ...row, size: 256 * 1024 }));
    expect(await session(big, server.client, { batchSize: 1000 }).ended).toBe("complete");
    expect(server.received.map((r) => r.names.length)).toEqual([4, 4, 2]);
  });
});

describe("a user the server refused", () => {
  it("is reported with the server's code, reason, message, metadata (when any) and field violations, and counted rejected", async () => {
    const server = standIn(undefined, {
      u2: {
        code: "invalid_argument",
        message: "invalid request: email.email: must be an email address",
        errorInfo: { reason: "request.invalid", metadata: {} },
        fieldViolations: [{ field: "email.email", description: "must be an email address", reason: "string.email" }],
      },
      u3: { code: "already_exists", message: "the user name is taken", errorInfo: { reason: "user.already_exists", metadata: { userName: "u3" } } },
      u4: "without an error",
      // A server that leaves out the ErrorInfo (Gatehouse always sends one): the row is reported all the same.
      u5: { code: "internal", message: "no info" },
    });
    const { ended, counts, reported, errors } = session(rows(5), server.client);
    expect(await ended).toBe("complete");
    expect(reported).toEqual([2, 3, 4, 5]);
    expect(errors).toEqual([
      { code: "invalid_argument", reason: "request.invalid", message: "invalid request: email.email: must be an email address", fieldViolations: [{ field: "email.email", description: "must be an email address" }] },
      { code: "already_exists", reason: "user.already_exists", message: "the user name is taken", metadata: { userName: "u3" }, fieldViolations: [] },
      { code: "unknown", reason: "", message: "", fieldViolations: [] },
      { code: "internal", reason: "", message: "no info", fieldViolations: [] },
    ]);
    expect(counts).toMatchObject({ done: 5, created: 1, rejected: 4 });
  });
});

describe("a stream the server ends early", () => {
  it("is followed by one that sends the unanswered users first, with SKIP instead of FAIL, then the rest", async () => {
    const server = standIn(3);
    const { ended, counts } = session(rows(10), server.client, { batchSize: 2 });
    expect(await ended).toBe("complete");
    // The first stream answered u1..u4; u5 and u6 (its third message) were not answered.
    const second = server.received.filter((r) => r.stream === 2);
    expect(second[0]).toEqual({ stream: 2, names: ["u5", "u6"], onConflict: OnConflict.SKIP });
    expect(second.slice(1).flatMap((r) => r.names)).toEqual(["u7", "u8", "u9", "u10"]);
    expect(second.slice(1).every((r) => r.onConflict === OnConflict.FAIL)).toBe(true);
    expect(counts).toMatchObject({ done: 10, created: 10 });
  });
});

describe("stopping", () => {
  it("sends nothing more once asked, lets what was sent be answered, and leaves the resume point there", async () => {
    const server = standIn();
    const { ended, counts } = session(rows(100), server.client, { batchSize: 10, stopAfter: 2 });
    expect(await ended).toBe("stopped");
    const sent = server.received.flatMap((r) => r.names).length;
    expect(counts.done).toBe(sent);
    expect(sent).toBeLessThan(100);
    expect(sent % 10).toBe(0);
  });
});
