import { existsSync, readdirSync, readFileSync, readlinkSync } from "node:fs";
import type { AddressInfo } from "node:net";
import pg from "pg";
import { SMTPServer } from "smtp-server";
import { afterEach, describe, expect, it } from "vitest";
import { SmtpService } from "../../gen/gatehouse/admin/v1/smtp_pb.js";
import { UserService } from "../../gen/gatehouse/admin/v1/user_pb.js";
import { eventually } from "../support/eventually.js";
import { type ReplicaProcess, threeReplicaProcesses } from "../support/replica-processes.js";
import { type Cleanups, sharedDatabase as sharedDatabaseFor } from "../support/shared-database.js";

// The outbox across replicas (issue 13, item 2): three Gatehouse PROCESSES on one PostgreSQL database, each with its
// delivery worker, mails queued through all three, a real SMTP relay: every mail is delivered once and recorded sent
// once. A replica killed (SIGKILL) while the relay holds its SMTP session open leaves that mail to another replica once
// its lease has passed; the outbox records it once (the killed replica never got the relay's answer, so the relay took
// it once too — were the kill to come after the relay accepted the data, the next holder would send it again: the
// at-least-once of the SMTP boundary, README "Outgoing mail").

/** Short SMTP timeouts make the lease short (delivery-worker.ts leaseFor: 5 × 3 × 300 ms + 2 s = 6.5 s). */
const SMTP_TIMEOUT_MS = 300;

const cleanups: Cleanups = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const sharedDatabase = () => sharedDatabaseFor(cleanups, "gatehouse-mail-replicas-");

/** A replica polling for mail every 50 ms, with short SMTP timeouts. */
const MAIL_ENV = { GATEHOUSE_SMTP_TIMEOUT_MS: String(SMTP_TIMEOUT_MS), GATEHOUSE_MAIL_POLL_MS: "50" };
const threeReplicas = (shared: { url: string; keyFile: string }) => threeReplicaProcesses(cleanups, shared, MAIL_ENV);
type Replica = ReplicaProcess;

interface Relay {
  port: number;
  /** Recipients of the mails the relay accepted (answered 250 after DATA), in order. */
  accepted: string[];
  /** The client ports of sessions whose DATA the relay is holding unanswered. */
  holding: number[];
}

/** A real SMTP relay; with `holdFirst`, the first message's DATA is never answered (its session stays open). */
async function relay(options: { holdFirst?: boolean } = {}): Promise<Relay> {
  const state: Relay = { port: 0, accepted: [], holding: [] };
  let held = false;
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS"],
    hideSTARTTLS: true,
    logger: false,
    // The held session must outlive the lease (smtp-server's own inactivity timeout is 60 s by default).
    socketTimeout: 120_000,
    onData(stream, session, callback) {
      stream.resume();
      stream.on("end", () => {
        if (options.holdFirst && !held) {
          held = true;
          state.holding.push(session.remotePort);
          return;
        }
        state.accepted.push(...session.envelope.rcptTo.map((to) => to.address));
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  state.port = (server as unknown as { server: { address(): AddressInfo } }).server.address().port;
  return state;
}

/** The pid, of `pids`, that has the TCP socket bound to 127.0.0.1:`localPort` open (Linux /proc). */
function ownerOfPort(localPort: number, pids: number[]): number | undefined {
  const hexPort = localPort.toString(16).toUpperCase().padStart(4, "0");
  const inodes = new Set<string>();
  for (const table of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    if (!existsSync(table)) continue;
    for (const line of readFileSync(table, "utf8").split("\n").slice(1)) {
      const fields = line.trim().split(/\s+/);
      if (fields[1]?.endsWith(`:${hexPort}`)) inodes.add(fields[9]!);
    }
  }
  return pids.find((pid) => {
    try {
      return readdirSync(`/proc/${pid}/fd`).some((fd) => {
        try {
          const target = readlinkSync(`/proc/${pid}/fd/${fd}`);
          return inodes.has(target.replace(/^socket:\[(\d+)\]$/, "$1"));
        } catch {
          return false;
        }
      });
    } catch {
      return false;
    }
  });
}

async function useRelay(replica: Replica, adminToken: string, port: number) {
  await replica.clients.client(SmtpService, "connect-json-http1", { token: adminToken }).createSmtpConfig({
    senderAddress: "noreply@gatehouse.test",
    senderName: "Gatehouse",
    tls: false,
    host: `127.0.0.1:${port}`,
    user: "",
  });
}

/** Creates a human user through `replica`; its initialization mail goes to `email`. */
async function queueMail(replica: Replica, adminToken: string, email: string) {
  await replica.clients.client(UserService, "grpc-h2c", { token: adminToken }).createHumanUser({
    userName: email.replace(/@.*/, ""),
    profile: { firstName: "Mail", lastName: "Replica" },
    email: { email },
    password: "Sup3r-secret!",
  });
}

/** The outbox as the database holds it, and how many notification.sent events each message has. */
async function outboxState(sql: pg.Client) {
  const { rows } = await sql.query<{ recipient: string; status: string; sent_events: number }>(
    `SELECT o.recipient, o.status, (SELECT count(*)::int FROM events e WHERE e.aggregate_type = 'notification' AND e.aggregate_id = o.id AND e.type = 'notification.sent') AS sent_events
     FROM outbox o ORDER BY o.recipient`,
  );
  return rows;
}

describe("the outbox on three replicas of one PostgreSQL database", () => {
  it("every mail queued through any replica is delivered once, by whichever replica claimed it, and recorded sent once", { timeout: 180_000 }, async () => {
    const shared = await sharedDatabase();
    const { replicas, adminToken } = await threeReplicas(shared);
    const smtp = await relay();
    await useRelay(replicas[0]!, adminToken, smtp.port);
    const emails = Array.from({ length: 15 }, (_, i) => `spread-${String(i).padStart(2, "0")}@example.com`);
    await Promise.all(emails.map((email, i) => queueMail(replicas[i % replicas.length]!, adminToken, email)));
    const sent = await eventually(
      async () => {
        const rows = await outboxState(shared.sql);
        return rows.length === emails.length && rows.every((row) => row.status === "sent") ? rows : undefined;
      },
      { what: "every queued mail to be recorded sent", timeoutMs: 60_000, intervalMs: 100 },
    );
    expect(sent).toEqual(emails.map((recipient) => ({ recipient, status: "sent", sent_events: 1 })));
    // The relay took each once; nothing is left to any worker.
    expect([...smtp.accepted].sort()).toEqual(emails);
    const { rows: owners } = await shared.sql.query<{ claimed_by: string }>("SELECT DISTINCT claimed_by FROM outbox");
    expect(owners.every((owner) => owner.claimed_by !== null)).toBe(true);
  });

  it("a user's mails reach the relay in the order they were queued, whichever replicas send them", { timeout: 180_000 }, async () => {
    const shared = await sharedDatabase();
    const { replicas, adminToken } = await threeReplicas(shared);
    const smtp = await relay();
    await useRelay(replicas[0]!, adminToken, smtp.port);
    // Each user: an initialization mail, then two verification mails (a new address each time), each queued through
    // another replica, while all three deliver.
    const queued = await Promise.all(
      Array.from({ length: 6 }, async (_, u) => {
        const addresses = [0, 1, 2].map((k) => `order-${u}-${k}@example.com`);
        const { userId } = await replicas[u % 3]!.clients.client(UserService, "grpc-h2c", { token: adminToken }).createHumanUser({
          userName: `order-${u}`,
          profile: { firstName: "In", lastName: "Order" },
          email: { email: addresses[0]! },
          password: "Sup3r-secret!",
        });
        for (const k of [1, 2]) await replicas[(u + k) % 3]!.clients.client(UserService, "connect-json-http1", { token: adminToken }).setEmail({ userId, email: addresses[k]! });
        return addresses;
      }),
    );
    const all = queued.flat();
    await eventually(() => smtp.accepted.length >= all.length || undefined, { what: "every mail at the relay", timeoutMs: 60_000, intervalMs: 50 });
    expect([...smtp.accepted].sort()).toEqual([...all].sort());
    for (const addresses of queued) expect(smtp.accepted.filter((to) => addresses.includes(to))).toEqual(addresses);
  });

  it("a replica killed while the relay holds its SMTP session open leaves the mail to another once its lease has passed", { timeout: 180_000 }, async () => {
    const shared = await sharedDatabase();
    const { replicas, adminToken } = await threeReplicas(shared);
    const smtp = await relay({ holdFirst: true });
    await useRelay(replicas[0]!, adminToken, smtp.port);
    const email = "held-then-killed@example.com";
    await queueMail(replicas[1]!, adminToken, email);
    const clientPort = await eventually(() => smtp.holding[0], { what: "a replica's SMTP session to be held at DATA", timeoutMs: 30_000 });
    const pids = replicas.map((r) => r.process.child.pid!);
    const holder = replicas.find((r) => r.process.child.pid === ownerOfPort(clientPort, pids));
    expect(holder, "the replica whose socket the relay holds").toBeDefined();
    holder!.process.child.kill("SIGKILL");
    await holder!.process.exit;
    // Claimed by the killed replica, not sent, and nobody else's yet.
    const [claimed] = (await shared.sql.query<{ status: string; claimed_by: string; claimed_until: string }>("SELECT status, claimed_by, claimed_until FROM outbox")).rows;
    expect(claimed).toMatchObject({ status: "pending" });
    const killedOwner = claimed!.claimed_by;
    const sent = await eventually(
      async () => {
        const rows = await outboxState(shared.sql);
        return rows[0]?.status === "sent" ? rows : undefined;
      },
      { what: "another replica to deliver the mail after the lease", timeoutMs: 60_000, intervalMs: 100 },
    );
    expect(sent).toEqual([{ recipient: email, status: "sent", sent_events: 1 }]);
    expect(smtp.accepted).toEqual([email]);
    const [after] = (await shared.sql.query<{ claimed_by: string }>("SELECT claimed_by FROM outbox")).rows;
    expect(after!.claimed_by).not.toBe(killedOwner);
    // Not before the killed replica's lease ended.
    expect(Date.now()).toBeGreaterThanOrEqual(Number(claimed!.claimed_until));
  });
});
