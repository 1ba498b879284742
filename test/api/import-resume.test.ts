import { create } from "@bufbuild/protobuf";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ImportHumanUsersRequestSchema, ImportOutcome, OnConflict, UserService } from "../../gen/gatehouse/admin/v1/user_pb.js";
import { importedUser } from "../support/import.js";
import { type GatehouseProcess, spawnGatehouse } from "../support/process.js";
import { storedRows } from "../support/stored-rows.js";

/**
 * Resuming a broken import (issue 14): a server killed with SIGKILL in the middle of an ImportHumanUsers stream, started
 * again on its data dir, and the stream sent again from the last durable index it answered + 1 with SKIP or UPDATE:
 * every user the killed server acknowledged is there, every user of the file is there exactly once, each with exactly
 * one creation event.
 */
const dataDir = mkdtempSync(join(tmpdir(), "gatehouse-import-resume-"));
const running: GatehouseProcess[] = [];
afterAll(async () => {
  for (const server of running) {
    server.child.kill("SIGKILL");
    await server.exit;
  }
  rmSync(dataDir, { recursive: true, force: true });
});

const USERS = 6000;
const PER_MESSAGE = 500;

async function start(): Promise<ReturnType<typeof createClient<typeof UserService>>> {
  const server = await spawnGatehouse({ GATEHOUSE_DATA_DIR: dataDir });
  running.push(server);
  const token = readFileSync(join(dataDir, "admin.pat"), "utf8").trim();
  const transport = createGrpcTransport({
    baseUrl: server.url,
    interceptors: [
      (next) => (req) => {
        req.header.set("authorization", `Bearer ${token}`);
        return next(req);
      },
    ],
  });
  return createClient(UserService, transport);
}

/** The file's users from `first` on, in messages of PER_MESSAGE. */
async function* messages(prefix: string, first: number, onConflict: OnConflict) {
  for (let start = first; start < USERS; start += PER_MESSAGE) {
    const users = [];
    for (let i = start; i < Math.min(USERS, start + PER_MESSAGE); i++) users.push(importedUser(`${prefix}-${i}`, {}, `${prefix}-src-${i}`));
    yield create(ImportHumanUsersRequestSchema, { users, onConflict });
  }
}

describe.each([
  ["skip", OnConflict.SKIP],
  ["update", OnConflict.UPDATE],
] as const)("an import resumed with %s after SIGKILL", (prefix, resumeWith) => {
  it("loses and duplicates nothing", { timeout: 120_000 }, async () => {
    let users = await start();
    const acknowledged = new Map<number, string>();
    let lastDurable = -1;
    let responses = 0;
    const killed = (async () => {
      try {
        for await (const response of users.importHumanUsers(messages(prefix, 0, OnConflict.FAIL))) {
          for (const result of response.results) {
            expect(result.outcome).toBe(ImportOutcome.CREATED);
            acknowledged.set(Number(result.index), result.userId);
          }
          lastDurable = Number(response.lastDurableIndex);
          // Killed mid-stream: with messages still in flight, some perhaps committed but not answered.
          if (++responses === 3) running.at(-1)!.child.kill("SIGKILL");
        }
      } catch {
        return "broken";
      }
      return "finished";
    })();
    expect(await killed).toBe("broken");
    await running.at(-1)!.exit;
    // Answers already on their way when it died may still arrive; but not all of them.
    expect(lastDurable).toBeGreaterThanOrEqual(3 * PER_MESSAGE - 1);
    expect(lastDurable).toBeLessThan(USERS - 1);
    expect([...acknowledged.keys()].sort((a, b) => a - b)).toEqual(Array.from({ length: lastDurable + 1 }, (_, i) => i));

    // Started again on its data dir, resumed from the last durable index + 1.
    users = await start();
    const outcomes = new Map<string, number>();
    for await (const response of users.importHumanUsers(messages(prefix, lastDurable + 1, resumeWith))) {
      for (const result of response.results) {
        const name = ImportOutcome[result.outcome];
        outcomes.set(name, (outcomes.get(name) ?? 0) + 1);
      }
    }
    // Users committed before the kill but never answered are found again (skipped or unchanged), the rest created.
    expect([...outcomes.keys()].every((name) => ["CREATED", "SKIPPED", "UNCHANGED"].includes(name))).toBe(true);
    expect([...outcomes.values()].reduce((a, b) => a + b, 0)).toBe(USERS - lastDurable - 1);

    const server = { dataDir };
    const stored = await storedRows<{ id: string; user_name: string }>(server, "select id, user_name from users where user_name like ?", `${prefix}-%`);
    expect(stored.length).toBe(USERS);
    expect(new Set(stored.map((row) => row.user_name)).size).toBe(USERS);
    const byName = new Map(stored.map((row) => [row.user_name, row.id]));
    for (const [index, userId] of acknowledged) expect(byName.get(`${prefix}-${index}`)).toBe(userId);
    const [counted] = await storedRows<{ added: number }>(
      server,
      "select count(*) as added from events where type = 'user.human.added' and aggregate_id in (select id from users where user_name like ?)",
      `${prefix}-%`,
    );
    expect(Number(counted?.added)).toBe(USERS);
    running.at(-1)!.child.kill("SIGTERM");
    await running.at(-1)!.exit;
  });
});
