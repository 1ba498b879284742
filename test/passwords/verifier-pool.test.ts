import { readFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { threadId as mainThreadId } from "node:worker_threads";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { DomainError } from "../../src/domain/errors.js";
import { createVerifierPool, VerifierBusyError, VerifierClosedError, type VerifierPool } from "../../src/support/password-verify/verifier-pool.js";
import { closeImportedHashVerifier, verifyImportedHash } from "../../src/support/password-verify/verify.js";
import { closedAfterEachTest } from "../support/verifier-pools.js";

const fixtures = JSON.parse(readFileSync(new URL("../fixtures/password-hashes/hashes.json", import.meta.url), "utf8")) as {
  password: string;
  hashes: { scheme: string; source: string; hash: string }[];
};
const hashOf = (scheme: string) => fixtures.hashes.find((f) => f.scheme === scheme)!.hash;
const md5 = hashOf("md5-crypt");
const bcrypt = hashOf("bcrypt-2b");

const settledAs = (promise: Promise<unknown>) =>
  promise.then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );

const pool = closedAfterEachTest();

describe("the imported-hash verifier pool, every scheme", () => {
  let verifier: VerifierPool;
  beforeAll(() => {
    verifier = createVerifierPool({ size: 1 });
  });
  afterAll(() => verifier.close());

  it.each(fixtures.hashes.map((f) => [`${f.scheme} (${f.source})`, f.hash] as const))("verifies %s on a worker thread, not the main thread", async (_name, hash) => {
    const right = await verifier.verify(hash, fixtures.password);
    const wrong = await verifier.verify(hash, `${fixtures.password}x`);
    expect(right.matches).toBe(true);
    expect(wrong.matches).toBe(false);
    expect(right.threadId).not.toBe(mainThreadId);
    expect(right.threadId).toBeGreaterThan(0);
  });
});

describe("the imported-hash verifier pool", () => {
  it("runs at most `size` verifications at once, each on its own thread", async () => {
    const verifier = pool({ size: 2 });
    const results = await Promise.all([bcrypt, bcrypt, bcrypt, bcrypt].map((hash) => verifier.verify(hash, fixtures.password)));
    expect(results.every((r) => r.matches)).toBe(true);
    expect(new Set(results.map((r) => r.threadId)).size).toBe(2);
  });

  it("refuses work past its bounded queue instead of queueing without end", async () => {
    const verifier = pool({ size: 1, maxQueued: 1 });
    const running = verifier.verify(bcrypt, fixtures.password);
    const waiting = verifier.verify(md5, fixtures.password);
    await expect(verifier.verify(md5, fixtures.password)).rejects.toBeInstanceOf(VerifierBusyError);
    expect((await running).matches).toBe(true);
    expect((await waiting).matches).toBe(true);
    // The queue drained, so there is room again.
    expect((await verifier.verify(md5, fixtures.password)).matches).toBe(true);
  });

  it("drops a waiting verification when its caller aborts", async () => {
    const verifier = pool({ size: 1 });
    const running = verifier.verify(bcrypt, fixtures.password);
    const caller = new AbortController();
    const waiting = settledAs(verifier.verify(md5, fixtures.password, caller.signal));
    caller.abort(new Error("caller went away"));
    expect(await waiting).toEqual({ error: new Error("caller went away") });
    expect((await running).matches).toBe(true);
  });

  it("reports a job that fails inside the worker without losing the worker", async () => {
    const verifier = pool({ size: 1 });
    await expect(verifier.verify("not a hash", "x")).rejects.toThrow(/DomainError/);
    expect((await verifier.verify(md5, fixtures.password)).matches).toBe(true);
  });

  it("close fails running and waiting verifications and refuses new ones", async () => {
    const verifier = createVerifierPool({ size: 1 });
    const running = settledAs(verifier.verify(bcrypt, fixtures.password));
    const waiting = settledAs(verifier.verify(md5, fixtures.password));
    await verifier.close();
    expect(await running).toEqual({ error: expect.any(VerifierClosedError) });
    expect(await waiting).toEqual({ error: expect.any(VerifierClosedError) });
    await expect(verifier.verify(md5, fixtures.password)).rejects.toBeInstanceOf(VerifierClosedError);
  });
});

/** A bcrypt hash that keeps a worker busy for a few hundred milliseconds (it matches no password: only its cost counts). */
const slow = bcrypt.replace(/^\$2b\$\d\d\$/, "$2b$12$");
const costlyOf = (owner: string) => ({ owner });

/** Runs the verifications and answers the order in which they settled, by their labels. */
async function settleOrder(calls: [label: string, call: Promise<unknown>][]): Promise<string[]> {
  const order: string[] = [];
  await Promise.all(calls.map(([label, call]) => call.finally(() => order.push(label))));
  return order;
}

describe("the verifier pool's costly lane (hashes that cost seconds hold no one else's sign-ins)", () => {
  it("runs costly verifications on all workers but one: a cheap one does not wait for them", async () => {
    const verifier = pool({ size: 2 });
    const order = await settleOrder([
      ["costly 1", verifier.verify(slow, "x", undefined, costlyOf("a"))],
      ["costly 2", verifier.verify(slow, "x", undefined, costlyOf("b"))],
      ["costly 3", verifier.verify(slow, "x", undefined, costlyOf("c"))],
      ["cheap", verifier.verify(md5, fixtures.password)],
    ]);
    expect(order[0]).toBe("cheap");
  });

  it("serves the owner served least recently first: one owner's waiting costly jobs do not starve another's", async () => {
    const verifier = pool({ size: 2 });
    const order = await settleOrder([
      ["a 1", verifier.verify(slow, "x", undefined, costlyOf("a"))],
      ["a 2", verifier.verify(slow, "x", undefined, costlyOf("a"))],
      ["a 3", verifier.verify(slow, "x", undefined, costlyOf("a"))],
      ["b 1", verifier.verify(slow, "x", undefined, costlyOf("b"))],
    ]);
    expect(order).toEqual(["a 1", "b 1", "a 2", "a 3"]);
  });

  it("still runs costly verifications side by side when there are workers to spare", async () => {
    const verifier = pool({ size: 3 });
    const results = await Promise.all([verifier.verify(slow, "x", undefined, costlyOf("a")), verifier.verify(slow, "x", undefined, costlyOf("a"))]);
    // One after the other, both would have run on the first thread (the first idle one is taken).
    expect(new Set(results.map((r) => r.threadId)).size).toBe(2);
  });

  it("runs costly verifications on a one-worker pool too", async () => {
    const verifier = pool({ size: 1 });
    expect((await verifier.verify(md5, fixtures.password, undefined, costlyOf("a"))).matches).toBe(true);
    expect((await verifier.verify(md5, fixtures.password, undefined, costlyOf("a"))).matches).toBe(true);
  });

  it("has at least two workers by default, even on one core, so the costly lane always leaves one", () => {
    expect(pool({}).size).toBe(Math.max(2, Math.min(availableParallelism(), 8)));
  });

  it("lets costly verifications wait in a quarter of the queue, so cheap ones still find room", async () => {
    const verifier = pool({ size: 1, maxQueued: 8 });
    const running = verifier.verify(slow, "x", undefined, costlyOf("a"));
    const waiting = [verifier.verify(md5, fixtures.password, undefined, costlyOf("a")), verifier.verify(md5, fixtures.password, undefined, costlyOf("b"))];
    await expect(verifier.verify(md5, fixtures.password, undefined, costlyOf("c"))).rejects.toThrow("more than 2 costly password verifications waiting");
    const cheap = verifier.verify(md5, fixtures.password);
    await Promise.all([running, ...waiting, cheap]);
    // Their places are free again once they left the queue.
    expect((await verifier.verify(md5, fixtures.password, undefined, costlyOf("c"))).matches).toBe(true);
  });

  it("lets one owner's costly verifications wait in a quarter of the costly places, so another owner's still find room", async () => {
    const verifier = pool({ size: 1, maxQueued: 64 });
    const running = verifier.verify(slow, "x");
    const waiting = [1, 2, 3, 4].map(() => verifier.verify(md5, fixtures.password, undefined, costlyOf("a")));
    await expect(verifier.verify(md5, fixtures.password, undefined, costlyOf("a"))).rejects.toThrow("more than 4 costly password verifications of one owner waiting");
    const other = verifier.verify(md5, fixtures.password, undefined, costlyOf("b"));
    await Promise.all([running, ...waiting, other]);
    // Its places are free again once its jobs left the queue.
    expect((await verifier.verify(md5, fixtures.password, undefined, costlyOf("a"))).matches).toBe(true);
  });

  it("gives back a costly place in the queue when a waiting verification is dropped", async () => {
    const verifier = pool({ size: 1, maxCostlyQueued: 1 });
    const running = verifier.verify(slow, "x");
    const caller = new AbortController();
    const dropped = settledAs(verifier.verify(md5, fixtures.password, caller.signal, costlyOf("a")));
    caller.abort(new Error("gone"));
    expect(await dropped).toEqual({ error: new Error("gone") });
    const next = verifier.verify(md5, fixtures.password, undefined, costlyOf("a"));
    await running;
    expect((await next).matches).toBe(true);
  });

  it("counts a costly verification as over when it fails, so the next one runs", async () => {
    const verifier = pool({ size: 2, maxCostlyRunning: 1 });
    await expect(verifier.verify("not a hash", "x", undefined, costlyOf("a"))).rejects.toThrow(/DomainError/);
    expect((await verifier.verify(md5, fixtures.password, undefined, costlyOf("a"))).matches).toBe(true);
  });
});

describe("verifyImportedHash (the process-wide pool)", () => {
  afterEach(closeImportedHashVerifier);

  it("rejects a malformed hash with invalid_argument before queueing", async () => {
    await expect(verifyImportedHash("$2b$19$" + "a".repeat(53), "x")).rejects.toMatchObject({ kind: "invalid_argument", reason: "hashed_password.malformed" });
  });

  it("answers resource_exhausted once its queue is full", async () => {
    // Every call queues synchronously, so the workers cannot drain anything during this loop.
    const calls = Array.from({ length: 8 + 256 + 1 }, () => settledAs(verifyImportedHash(md5, fixtures.password)));
    const outcomes = await Promise.all(calls);
    const busy = outcomes.filter((o) => "error" in o);
    expect(busy.length).toBeGreaterThan(0);
    for (const o of busy) expect((o as { error: DomainError }).error).toMatchObject({ kind: "resource_exhausted", reason: "password_verify.busy" });
    expect(outcomes.filter((o) => "value" in o).every((o) => (o as { value: boolean }).value)).toBe(true);
  });

  it("answers unavailable for work cut off by close, then starts afresh", async () => {
    const cut = settledAs(verifyImportedHash(bcrypt, fixtures.password));
    await closeImportedHashVerifier();
    expect(await cut).toEqual({ error: expect.objectContaining({ kind: "unavailable", reason: "password_verify.closed" }) });
    expect(await verifyImportedHash(bcrypt, fixtures.password)).toBe(true);
  });
});
