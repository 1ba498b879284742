import { Code } from "@connectrpc/connect";
import Database from "better-sqlite3";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { UserService } from "../../gen/gatehouse/admin/v1/user_pb.js";
import { failure } from "../support/errors.js";
import { endOpenBatches } from "../../src/store/sqlite/commit-batches.js";
import { useTestServer } from "../support/server.js";

/**
 * Every write appends its events in the same transaction as its rows (ARCHITECTURE, step 5). Only a
 * failing append can show that: the fault is a trigger in the server's own database that aborts the
 * insert of one event type, so the real store runs its real transaction and the append inside it
 * throws after the rows (and the earlier events) of that commit were already written.
 */
const t = useTestServer();
const FAULT = "fault_abort_event_append";
// The in-process server's open write batch holds SQLite's write lock until its turn ends, which a connection on this
// same thread cannot wait for: it is committed first (commit-batches.ts).
const database = () => {
  endOpenBatches();
  return new Database(join(t.server.dataDir, "gatehouse.db"));
};
const users = () => t.clients.client(UserService, "connect-json-http1", { token: t.server.adminToken });

function failAppendOf(eventType: string) {
  const handle = database();
  handle.exec(`create trigger ${FAULT} before insert on events when new.type = '${eventType}' begin select raise(abort, 'injected: event append failed'); end`);
  handle.close();
}
afterEach(() => {
  const handle = database();
  handle.exec(`drop trigger if exists ${FAULT}`);
  handle.close();
});

const lastSequence = () => {
  const handle = database();
  const { last } = handle.prepare("select coalesce(max(sequence), 0) as last from events").get() as { last: number };
  handle.close();
  return last;
};

/** Everything createHumanUser writes for `userName`, read straight from the tables; user events after `since`. */
function rowsOf(userName: string, since = 0) {
  const handle = database();
  try {
    const user = handle.prepare("select id from users where user_name = ?").get(userName) as { id: string } | undefined;
    const byUser = (sql: string) => (user ? (handle.prepare(sql).get(user.id) as { n: number }).n : 0);
    return {
      users: user ? 1 : 0,
      codes: byUser("select count(*) as n from one_time_codes where user_id = ?"),
      outbox: (handle.prepare("select count(*) as n from outbox where recipient = ?").get(`${userName}@example.com`) as { n: number }).n,
      userEvents: (handle.prepare("select count(*) as n from events where aggregate_type = 'user' and sequence > ?").get(since) as { n: number }).n,
    };
  } finally {
    handle.close();
  }
}

const human = (userName: string) => ({
  userName,
  profile: { firstName: "Fault", lastName: "Injected" },
  email: { email: `${userName}@example.com` },
  password: "Sup3r-secret!",
});

describe("a failing event append rolls back the whole commit", () => {
  it("the user, its code, its outbox mail and its first event are absent when the LAST event cannot be appended", async () => {
    // user.notification.queued is appended last, after user.insert, code and outbox writes and user.human.added.
    failAppendOf("user.notification.queued");
    const since = lastSequence();
    const error = await failure(users().createHumanUser(human("fault-last-event")));
    expect(error.code).toBe(Code.Internal);
    expect(rowsOf("fault-last-event", since)).toEqual({ users: 0, codes: 0, outbox: 0, userEvents: 0 });
  });

  it("the same request without the fault writes every one of those rows (so the check above can see them)", async () => {
    const since = lastSequence();
    await users().createHumanUser(human("fault-control"));
    const rows = rowsOf("fault-control", since);
    expect(rows).toMatchObject({ users: 1, codes: 1, outbox: 1 });
    expect(rows.userEvents).toBeGreaterThanOrEqual(2);
  });

  it("a failed append leaves the server writing normally afterwards (no transaction left open)", async () => {
    failAppendOf("user.human.added");
    expect((await failure(users().createHumanUser(human("fault-first-event")))).code).toBe(Code.Internal);
    const handle = database();
    handle.exec(`drop trigger ${FAULT}`);
    handle.close();
    await users().createHumanUser(human("fault-after"));
    expect(rowsOf("fault-first-event").users).toBe(0);
    expect(rowsOf("fault-after").users).toBe(1);
  });
});
