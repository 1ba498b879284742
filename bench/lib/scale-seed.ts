/**
 * `--scale`: a Gatehouse data dir with N human users in N / 1 000 organizations and about 5 × N events, written
 * through the store's commit path (`Store.commit`, many users per commit) on a bootstrapped data dir whose server is
 * stopped — not through the API, which would take hours. What each user gets is what the commands write for it,
 * with the same RowWrites and events (src/commands/human-user.ts, one-time-code.ts, email-verification.ts,
 * add-member.ts, organization.ts, src/notify/delivery-worker.ts):
 *
 * 1. CreateHumanUser with an imported bcrypt hash and an unverified email: `user.insert` (INITIAL), the email code
 *    (`code.replace`, by `issueCode`), the initialization mail (`outbox.insert`, by `newOutboxRow`, sealed);
 *    events `user.human.added`, `user.code.added`, `user.notification.queued`.
 * 2. The delivery worker sends the mail: `outbox.sent`; event `notification.sent` (actor system).
 * 3. VerifyEmail with the right code: `code.claimAttempt`, `code.use`, `user.emailVerified` (ACTIVE: it has a
 *    password); event `user.email.verified`.
 *
 * So five events per user. Besides, the first user of each organization is its ORG_OWNER and every hundredth one
 * an ORG_USER_MANAGER (`membership.insert`, event `org.member.added`), and each new organization has its
 * `org.added`. The bootstrap organization is one of the N / 1 000 (the bench's own calls run there, so its
 * lists are as long as the others'). Users are spread over the last year (the commits' clock), organization by
 * organization. Memory stays bounded: one batch of users is built, committed and dropped at a time.
 */
import { createHash } from "node:crypto";
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import { issueCode } from "../../src/commands/one-time-code.js";
import { dataFiles } from "../../src/config.js";
import type { Deps } from "../../src/context.js";
import { emailKey, normalizeEmail } from "../../src/domain/contact.js";
import { MAX_CODE_ATTEMPTS } from "../../src/domain/codes.js";
import { defaultDisplayName, initialSetup } from "../../src/domain/human-user.js";
import { parseImportedHash } from "../../src/domain/imported-hash.js";
import { uniquenessKey } from "../../src/domain/names.js";
import { SYSTEM_ACTOR, type NewEvent } from "../../src/events/event.js";
import { EventType } from "../../src/events/types.js";
import { newOutboxRow } from "../../src/notify/outbox.js";
import { initializationMail } from "../../src/notify/templates.js";
import { readMasterKeyFile } from "../../src/startup/master-key.js";
import { createSqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import type { Store } from "../../src/store/store.js";
import type { RowWrite } from "../../src/store/commit.js";
import { createIdGenerator } from "../../src/support/ids.js";
import { REPO } from "./servers.js";

/** The README's example hash (bench/lib/scenarios.ts): stored as given, parsed for its scheme like the command does. */
const BCRYPT_HASH = "$2b$10$N9qo8uLOickgx2ZMRZoMyeIjZAgcfl7p92ldGxad68LJZdL17lhWy";
/** Users per commit: large enough that a commit's fixed cost does not matter, small enough to keep memory flat. */
export const SEED_BATCH = 500;
const YEAR_MS = 365 * 24 * 3_600_000;

export interface ScaleSize {
  users: number;
  organizations: number;
}

/** N users in N / 1 000 organizations (at least one: the bootstrap organization). */
export function scaleSize(users: number): ScaleSize {
  return { users, organizations: Math.max(1, Math.round(users / 1_000)) };
}

export interface SeedSummary {
  users: number;
  organizations: number;
  memberships: number;
  events: number;
  outbox: number;
  seconds: number;
  databaseMb: number;
  /** The seeding process's peak RSS (VmHWM), MB. */
  seederPeakRssMb: number;
}

/** How many of an organization's users come before organization `index` (users spread evenly, remainder first). */
const usersBefore = (index: number, size: ScaleSize) => {
  const base = Math.floor(size.users / size.organizations);
  const extra = size.users % size.organizations;
  return index * base + Math.min(index, extra);
};

const peakRssMb = () => {
  const match = /^VmHWM:\s+(\d+) kB/m.exec(readFileSync("/proc/self/status", "utf8"));
  return match ? Math.round(Number(match[1]) / 1024) : Math.round(process.memoryUsage().rss / 2 ** 20);
};

/**
 * Seeds a data dir that Gatehouse has bootstrapped (and that no server holds now): organizations, then the users of
 * each organization in batches of `SEED_BATCH`, three commits per batch (creation, delivery, verification).
 */
export async function seedScale(dataDir: string, users: number, log: (line: string) => void): Promise<SeedSummary> {
  const size = scaleSize(users);
  const files = dataFiles({ dataDir });
  const masterKey = readMasterKeyFile(files.masterKey, { unreadable: "", malformed: "" });
  const ids = createIdGenerator();
  // issueCode needs only the id source and the master key of Deps.
  const codeDeps = { ids, masterKey } as Pick<Deps, "ids" | "masterKey"> as Deps;
  // The seed is rebuilt from nothing if it fails half-way: it need not wait for the disk (the server that opens it
  // afterwards syncs as always).
  const store: Store = createSqliteStore({ path: files.database, synchronous: "OFF", busyTimeoutMs: 10_000 });
  const started = Date.now();
  const counts = { users: 0, memberships: 0, events: 0, outbox: 0 };
  try {
    const instance = await store.getInstance();
    if (!instance) throw new Error(`${dataDir} is not bootstrapped`);
    const bootstrapOrg = await store.findOrganizationById(instance.defaultOrgId);
    const [admin] = await store.listUsers({ instanceId: instance.id, orgId: instance.defaultOrgId, limit: 1 });
    if (!bootstrapOrg || !admin) throw new Error(`${dataDir} has no bootstrap organization or admin`);
    const instanceId = instance.id;
    const externalUrl = "http://127.0.0.1:8080";
    const scheme = parseImportedHash(BCRYPT_HASH).scheme;
    const batchesTotal = Array.from({ length: size.organizations }, (_, o) => Math.ceil((usersBefore(o + 1, size) - usersBefore(o, size)) / SEED_BATCH)).reduce((a, b) => a + b, 0);
    const firstAt = Date.now() - YEAR_MS;
    const stepMs = YEAR_MS / Math.max(1, batchesTotal + 1);
    let batch = 0;
    const at = () => new Date(Math.round(firstAt + batch * stepMs));
    const commit = async (actor: string, when: Date, writes: RowWrite[], events: NewEvent[]) => {
      await store.commit({ instanceId, actor, at: when, writes, events });
      counts.events += events.length;
    };

    // The organizations (CreateOrganization, by the admin); the bootstrap one is the first.
    const organizations = [bootstrapOrg];
    for (let start = 1; start < size.organizations; start += SEED_BATCH) {
      const writes: RowWrite[] = [];
      const events: NewEvent[] = [];
      for (let o = start; o < Math.min(size.organizations, start + SEED_BATCH); o++) {
        const name = `Scale Org ${String(o).padStart(5, "0")}`;
        const row = { id: ids.next(), instanceId, name, nameKey: uniquenessKey(name), state: "active" as const };
        writes.push({ kind: "organization.insert", row });
        events.push({ aggregateType: "org", aggregateId: row.id, type: EventType.orgAdded, payload: { name }, resourceOwner: row.id });
        organizations.push(row);
      }
      await commit(admin.row.id, at(), writes, events);
    }
    log(`seed: ${organizations.length} organizations`);

    let nextReport = Date.now() + 15_000;
    for (const [o, organization] of organizations.entries()) {
      const first = usersBefore(o, size);
      const last = usersBefore(o + 1, size);
      for (let start = first; start < last; start += SEED_BATCH, batch++) {
        const created = at();
        const delivered = new Date(created.getTime() + 4_000);
        const verified = new Date(created.getTime() + 9 * 60_000);
        const create: { writes: RowWrite[]; events: NewEvent[] } = { writes: [], events: [] };
        const deliver: typeof create = { writes: [], events: [] };
        const verify: typeof create = { writes: [], events: [] };
        for (let u = start; u < Math.min(last, start + SEED_BATCH); u++) {
          const userId = ids.next();
          const userName = `scale.user.${u}`;
          const email = normalizeEmail(`${userName}@org${o}.scale.example.com`);
          const profile = { firstName: "Scale", lastName: `User ${u}`, nickName: "", displayName: defaultDisplayName("Scale", `User ${u}`), preferredLanguage: "en", gender: 0 };
          const setup = initialSetup({ hasIdpLinks: false, emailVerified: false, hasPassword: true, passwordless: false });
          const emailCode = issueCode(codeDeps, { id: userId, orgId: organization.id }, "email", created);
          const outboxId = ids.next();
          const template = `user.${setup.mail}`;
          const mail = initializationMail(
            { externalUrl, organizationName: organization.name, organizationId: organization.id, userId, userName, displayName: profile.displayName },
            { emailCode: emailCode.code },
          );
          create.writes.push(
            {
              kind: "user.insert",
              row: {
                id: userId,
                instanceId,
                orgId: organization.id,
                type: "human",
                state: setup.state,
                userName,
                userNameKey: uniquenessKey(userName),
                ...profile,
                email,
                emailKey: emailKey(email),
                emailVerified: false,
                phone: null,
                phoneVerified: null,
                passwordHash: BCRYPT_HASH,
                passwordChangeRequired: false,
                otpSecretSealed: null,
              },
            },
            emailCode.write,
            { kind: "outbox.insert", row: newOutboxRow(masterKey, { id: outboxId, instanceId, userId, template, recipient: email, mail, at: created }) },
          );
          create.events.push(
            {
              aggregateType: "user",
              aggregateId: userId,
              type: EventType.humanUserAdded,
              payload: {
                userName,
                profile,
                email,
                emailVerified: false,
                phone: null,
                phoneVerified: null,
                password: `imported:${scheme}`,
                passwordChangeRequired: false,
                otpConfigured: false,
                idpLinks: [],
                state: setup.state,
              },
              resourceOwner: organization.id,
            },
            emailCode.event,
            { aggregateType: "user", aggregateId: userId, type: EventType.userNotificationQueued, payload: { template, outboxId }, resourceOwner: organization.id },
          );
          const role = u === first ? "ORG_OWNER" : (u - first) % 100 === 0 ? "ORG_USER_MANAGER" : undefined;
          if (role) {
            const membershipId = ids.next();
            const roles = [role];
            create.writes.push({ kind: "membership.insert", row: { id: membershipId, userId, level: "org", scopeId: organization.id, ownerOrgId: organization.id, projectId: null, roles } });
            create.events.push({
              aggregateType: "member",
              aggregateId: membershipId,
              type: EventType.orgMemberAdded,
              payload: { userId, roles, level: "org", scopeId: organization.id },
              resourceOwner: organization.id,
            });
            counts.memberships++;
          }
          deliver.writes.push({ kind: "outbox.sent", id: outboxId, attempts: 1 });
          deliver.events.push({
            aggregateType: "notification",
            aggregateId: outboxId,
            type: EventType.notificationSent,
            payload: { template, attempt: 1, host: "smtp.scale.example.com", response: "250 2.0.0 Ok: queued" },
            resourceOwner: instanceId,
          });
          verify.writes.push(
            { kind: "code.claimAttempt", id: emailCode.id, max: MAX_CODE_ATTEMPTS },
            { kind: "code.use", id: emailCode.id, at: verified.getTime() },
            // A user with a password was INITIAL only for its email: verified, it is ACTIVE.
            { kind: "user.emailVerified", id: userId, activate: true },
          );
          verify.events.push({ aggregateType: "user", aggregateId: userId, type: EventType.userEmailVerified, payload: { email, codeId: emailCode.id }, resourceOwner: organization.id });
          counts.users++;
          counts.outbox++;
        }
        await commit(admin.row.id, created, create.writes, create.events);
        await commit(SYSTEM_ACTOR, delivered, deliver.writes, deliver.events);
        await commit(admin.row.id, verified, verify.writes, verify.events);
        if (Date.now() >= nextReport) {
          nextReport = Date.now() + 15_000;
          const seconds = (Date.now() - started) / 1000;
          log(`seed: ${counts.users} / ${size.users} users, ${counts.events} events, ${(counts.users / seconds).toFixed(0)} users/s, seeder RSS ${Math.round(process.memoryUsage().rss / 2 ** 20)} MB`);
        }
      }
    }
  } finally {
    await store.close();
  }
  const seconds = (Date.now() - started) / 1000;
  const databaseMb = Math.round(
    ["", "-wal"].map((suffix) => `${files.database}${suffix}`).filter(existsSync).reduce((total, file) => total + statSync(file).size, 0) / 2 ** 20,
  );
  return { ...counts, organizations: size.organizations, seconds, databaseMb, seederPeakRssMb: peakRssMb() };
}

/** The newest migration's journal (wherever the store keeps it): part of the cache key. */
function migrationJournal(): string {
  const search = (dir: string): string | undefined => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        const found = search(path);
        if (found) return found;
      } else if (entry.name === "_journal.json") return path;
    }
    return undefined;
  };
  const journal = search(join(REPO, "src", "store"));
  if (!journal) throw new Error("no migration journal under src/store");
  return readFileSync(journal, "utf8");
}

/**
 * Where a seeded data dir of `users` is cached: the OS temporary dir, keyed by N, the schema (the migration
 * journal) and this seeder's own source, so a new migration or a change of what the seed writes seeds anew.
 */
export function scaleCacheDir(users: number): { dir: string; root: string } {
  const key = createHash("sha256")
    .update(migrationJournal())
    .update(readFileSync(new URL(import.meta.url), "utf8"))
    .digest("hex")
    .slice(0, 12);
  const root = join(os.tmpdir(), "gatehouse-bench-scale");
  return { root, dir: join(root, `users-${users}-${key}`) };
}

export interface ScaleDataDir {
  summary: SeedSummary;
  /** Taken from the cache (the summary is that of the seed that made it). */
  cached: boolean;
  /** Time to make `target`: the seed, or the copy from the cache. */
  seconds: number;
}

/**
 * Makes `target` a seeded data dir of `users`: a copy of the cached one when there is one (and `useCache`), else
 * bootstrapped by a Gatehouse start (`bootstrap`), seeded, and then copied into the cache (complete, or not at
 * all: written beside it and renamed). Older cache entries of the same N go.
 */
export async function prepareScaleDataDir(
  target: string,
  users: number,
  options: { useCache: boolean; bootstrap: (dataDir: string) => Promise<void>; log: (line: string) => void },
): Promise<ScaleDataDir> {
  const started = Date.now();
  const cache = scaleCacheDir(users);
  const summaryFile = (dir: string) => join(dir, "seed-summary.json");
  if (options.useCache && existsSync(summaryFile(cache.dir))) {
    options.log(`seed: copying the cached data dir of ${users} users (${cache.dir})`);
    cpSync(join(cache.dir, "data"), target, { recursive: true });
    const summary = JSON.parse(readFileSync(summaryFile(cache.dir), "utf8")) as SeedSummary;
    return { summary, cached: true, seconds: (Date.now() - started) / 1000 };
  }
  await options.bootstrap(target);
  const summary = await seedScale(target, users, options.log);
  options.log(
    `seed: ${summary.users} users, ${summary.organizations} organizations, ${summary.memberships} memberships, ${summary.events} events in ${summary.seconds.toFixed(0)} s; database ${summary.databaseMb} MB, seeder peak RSS ${summary.seederPeakRssMb} MB`,
  );
  if (options.useCache) {
    mkdirSync(cache.root, { recursive: true });
    for (const entry of readdirSync(cache.root)) {
      if (entry.startsWith(`users-${users}-`)) rmSync(join(cache.root, entry), { recursive: true, force: true });
    }
    const partial = `${cache.dir}.partial`;
    cpSync(target, join(partial, "data"), { recursive: true });
    writeFileSync(summaryFile(partial), `${JSON.stringify(summary, null, 2)}\n`);
    renameSync(partial, cache.dir);
    options.log(`seed: cached in ${cache.dir}`);
  }
  return { summary, cached: false, seconds: (Date.now() - started) / 1000 };
}
