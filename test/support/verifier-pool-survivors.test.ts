import { getEventListeners } from "node:events";
import { availableParallelism } from "node:os";
import { readFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { DomainError } from "../../src/domain/errors.js";
import { VerifierBusyError, VerifierClosedError } from "../../src/support/password-verify/verifier-pool.js";
import { closeImportedHashVerifier, verifyImportedHash } from "../../src/support/password-verify/verify.js";
import { closedAfterEachTest } from "./verifier-pools.js";

// The imported-hash verifier (src/support/password-verify): a pool of at most `size` threads — by default the usable
// cores, at most 8 — with a bounded queue. Its refusals say why: closed (server shutdown), busy (retry later), or the
// caller's own reason when the caller gave up first. verifyImportedHash maps them for clients: busy →
// resource_exhausted `password_verify.busy`, closed → unavailable `password_verify.closed`; any other failure is
// passed on as it is.

const fixtures = JSON.parse(readFileSync(new URL("../fixtures/password-hashes/hashes.json", import.meta.url), "utf8")) as {
  password: string;
  hashes: { scheme: string; hash: string }[];
};
const md5 = fixtures.hashes.find((f) => f.scheme === "md5-crypt")!.hash;

const pool = closedAfterEachTest();
afterEach(async () => {
  await closeImportedHashVerifier();
});

const failureOf = (promise: Promise<unknown>) =>
  promise.then(
    () => undefined,
    (error: unknown) => error,
  );

describe("the verifier pool", () => {
  it("has by default one thread per usable core, at most 8", () => {
    expect(pool({}).size).toBe(Math.max(1, Math.min(availableParallelism(), 8)));
  });

  it("refuses work once closed, saying it is closed", async () => {
    const verifier = pool({ size: 1 });
    await verifier.close();
    const error = await failureOf(verifier.verify(md5, fixtures.password));
    expect(error).toBeInstanceOf(VerifierClosedError);
    expect((error as Error).message).toMatch(/password verifier closed/);
  });

  it("refuses a job past its bounded queue, saying how many wait", async () => {
    const verifier = pool({ size: 1, maxQueued: 0 });
    const error = await failureOf(verifier.verify(md5, fixtures.password));
    expect(error).toBeInstanceOf(VerifierBusyError);
    expect((error as Error).message).toMatch(/more than 0 password verifications waiting/);
  });

  it("fails the jobs still waiting or running when it closes, saying it closed", async () => {
    const verifier = pool({ size: 1 });
    const running = failureOf(verifier.verify(md5, fixtures.password));
    const waiting = failureOf(verifier.verify(md5, fixtures.password));
    await verifier.close();
    for (const error of [await waiting, await running]) {
      expect(error).toBeInstanceOf(VerifierClosedError);
      expect((error as Error).message).toMatch(/password verifier closed/);
    }
  });
});

describe("the verifier pool and a caller's signal", () => {
  it("listens to the signal only while the job waits: once it runs, the signal is let go", async () => {
    const verifier = pool({ size: 1 });
    const running = verifier.verify(md5, fixtures.password);
    const caller = new AbortController();
    const waiting = verifier.verify(md5, fixtures.password, caller.signal);
    expect(getEventListeners(caller.signal, "abort")).toHaveLength(1);
    await running;
    expect((await waiting).matches).toBe(true);
    expect(getEventListeners(caller.signal, "abort")).toHaveLength(0);
  });

  it("drops a waiting job whose caller gives up, with the caller's reason", async () => {
    const verifier = pool({ size: 1 });
    const running = verifier.verify(md5, fixtures.password);
    const caller = new AbortController();
    const waiting = failureOf(verifier.verify(md5, fixtures.password, caller.signal));
    const reason = new Error("the caller gave up");
    caller.abort(reason);
    expect(await waiting).toBe(reason);
    expect((await running).matches).toBe(true);
  });
});

describe("verifyImportedHash, as clients see its refusals", () => {
  it("a caller that already gave up gets its own reason back, not a shutdown", async () => {
    const reason = new Error("the call was cancelled");
    const error = await failureOf(verifyImportedHash(md5, fixtures.password, AbortSignal.abort(reason)));
    expect(error).toBe(reason);
  });

  it("too many waiting verifications: resource_exhausted password_verify.busy, retry later; at shutdown: unavailable password_verify.closed", async () => {
    // More than the default queue (256) plus the threads can take: the last ones are refused as busy.
    const all = Array.from({ length: 300 }, () => failureOf(verifyImportedHash(md5, fixtures.password)));
    await closeImportedHashVerifier();
    const errors = await Promise.all(all);
    const busy = errors.find((error) => (error as DomainError | undefined)?.reason === "password_verify.busy");
    expect(busy).toBeInstanceOf(DomainError);
    expect(busy).toMatchObject({ kind: "resource_exhausted", message: expect.stringMatching(/too many password verifications.*retry later/) });
    const closed = errors.find((error) => (error as DomainError | undefined)?.reason === "password_verify.closed");
    expect(closed).toBeInstanceOf(DomainError);
    expect(closed).toMatchObject({ kind: "unavailable", message: expect.stringMatching(/shutting down/) });
  });
});
