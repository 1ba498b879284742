import { Code } from "@connectrpc/connect";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { OrganizationService } from "../../gen/gatehouse/admin/v1/organization_pb.js";
import { UserService } from "../../gen/gatehouse/admin/v1/user_pb.js";
import { loadConfig } from "../../src/config.js";
import { Clients } from "../support/clients.js";
import { failure } from "../support/errors.js";
import { type Gatehouse, startGatehouse } from "../../src/app.js";
import { dataFiles } from "../../src/config.js";
import { readFileSync, existsSync } from "node:fs";
import { LogCapture } from "../support/server.js";
import { createActor } from "../support/world.js";
import { type Cleanups, sharedDatabase as sharedDatabaseFor } from "../support/shared-database.js";

// Two Gatehouse servers (two replicas, each its own data dir and port) on ONE PostgreSQL database, sharing the master
// key through configuration: what one replica writes the other reads, a uniqueness rule holds across them, and a
// user locked through one is refused by the very next call on the other.

const cleanups: Cleanups = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const sharedDatabase = () => sharedDatabaseFor(cleanups, "gatehouse-replicas-");

/** A Gatehouse on its own port and data dir, on the shared database; `adminToken` if it was the one that bootstrapped. */
async function replica(shared: { url: string; keyFile: string }, givenDataDir?: string): Promise<{ gatehouse: Gatehouse; clients: Clients; adminToken?: string }> {
  const dataDir = givenDataDir ?? mkdtempSync(join(tmpdir(), "gatehouse-replica-"));
  if (!givenDataDir) cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
  const config = loadConfig([], { GATEHOUSE_PORT: "0", GATEHOUSE_DATA_DIR: dataDir, GATEHOUSE_DATABASE_URL: shared.url, GATEHOUSE_MASTER_KEY_FILE: shared.keyFile });
  const gatehouse = await startGatehouse({ config, logDestination: new LogCapture() });
  const clients = new Clients(gatehouse.url);
  cleanups.push(async () => {
    clients.close();
    await gatehouse.close();
  });
  const tokenFile = dataFiles(config).adminToken;
  return { gatehouse, clients, ...(existsSync(tokenFile) ? { adminToken: readFileSync(tokenFile, "utf8").trim() } : {}) };
}

describe("two replicas on one PostgreSQL database", () => {
  it("share state, keep uniqueness across replicas, and obey a lock made on the other at the very next call", async () => {
    const shared = await sharedDatabase();
    const a = await replica(shared);
    const b = await replica(shared);
    const adminToken = a.adminToken!;
    expect(b.adminToken).toBeUndefined();
    const orgsA = a.clients.client(OrganizationService, "connect-json-http1", { token: adminToken });
    const orgsB = b.clients.client(OrganizationService, "grpc-h2c", { token: adminToken });
    const { organizationId } = await orgsA.createOrganization({ name: "Replicated" });
    expect((await orgsB.getOrganization({ organizationId })).organization?.name).toBe("Replicated");
    // The same name on both replicas at once: one wins.
    const outcomes = await Promise.allSettled([orgsA.createOrganization({ name: "Twice" }), orgsB.createOrganization({ name: "twice" })]);
    expect(outcomes.filter((outcome) => outcome.status === "fulfilled")).toHaveLength(1);
    const lost = outcomes.find((outcome) => outcome.status === "rejected") as PromiseRejectedResult;
    expect(await failure(Promise.reject(lost.reason))).toMatchObject({ code: Code.AlreadyExists, reason: "organization.already_exists" });
    // A user who can call on B, locked through A: B refuses its next call.
    const actor = await createActor(a.clients, adminToken, organizationId, "replicated-user", ["ORG_OWNER"]);
    const usersB = b.clients.client(UserService, "connect-json-http1", { token: actor.token });
    await usersB.getUser({ userId: actor.userId });
    await a.clients.client(UserService, "connect-json-http1", { token: adminToken, orgId: organizationId }).lockUser({ userId: actor.userId });
    expect(await failure(usersB.getUser({ userId: actor.userId }))).toMatchObject({ code: Code.Unauthenticated });
  });

  it("may share one data dir (the default ./data, one volume): it is not locked, so the second starts too and both answer", async () => {
    const shared = await sharedDatabase();
    const dataDir = mkdtempSync(join(tmpdir(), "gatehouse-replica-shared-"));
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    const a = await replica(shared, dataDir);
    const b = await replica(shared, dataDir);
    const adminToken = a.adminToken!;
    const { organizationId } = await a.clients.client(OrganizationService, "connect-json-http1", { token: adminToken }).createOrganization({ name: "Shared dir" });
    expect((await b.clients.client(OrganizationService, "grpc-h2c", { token: adminToken }).getOrganization({ organizationId })).organization?.name).toBe("Shared dir");
    expect(existsSync(join(dataDir, "gatehouse.lock"))).toBe(false);
  });

  it("a replica given another master key refuses to start", async () => {
    const shared = await sharedDatabase();
    await replica(shared);
    const wrongKey = join(shared.dir, "wrong.key");
    writeFileSync(wrongKey, `${randomBytes(32).toString("base64")}\n`, { mode: 0o600 });
    const error = await replica({ url: shared.url, keyFile: wrongKey }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(String((error as Error)?.message)).toMatch(/does not open this database's sealed data/);
  });
});
