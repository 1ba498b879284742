import { readFileSync } from "node:fs";
import { afterAll, describe, expect, it } from "vitest";
import { InstanceService } from "../../gen/gatehouse/admin/v1/instance_pb.js";
import { Health, HealthCheckResponse_ServingStatus } from "../../gen/grpc/health/v1/health_pb.js";
import { checkImportedHash } from "../../src/support/password-verify/check-hash.js";
import { closeImportedHashVerifier, verifyImportedHash } from "../../src/support/password-verify/verify.js";
import { useTestServer } from "../support/server.js";

/** Real hashes at the highest parameters the import accepts (make-max-cost-fixtures.sh). */
const maxCost = JSON.parse(readFileSync(new URL("../fixtures/password-hashes/max-cost.json", import.meta.url), "utf8")) as {
  password: string;
  hashes: { scheme: string; source: string; hash: string }[];
};
// md5-crypt has no cost parameter (always 1000 rounds, well under a millisecond): nothing to race.
// Slowest first, so the pool's threads share the work and the test takes about as long as bcrypt.
const slowestFirst = ["bcrypt-2b", "scrypt", "pbkdf2-sha512", "sha512-crypt", "sha256-crypt", "argon2id"];
const costly = slowestFirst.map((scheme) => maxCost.hashes.find((f) => f.scheme === scheme)!);
const md5 = maxCost.hashes.find((f) => f.scheme === "md5-crypt")!;

const t = useTestServer();
afterAll(closeImportedHashVerifier);

/**
 * Starts every verification, then makes two cheap calls to the server running in this same
 * process: Health/Check (no token, Connect JSON over HTTP/1.1) and GetInstance (admin token, gRPC).
 * Returns which verifications were still running when both had answered, and each one's result.
 * A verification that blocks the event loop settles before any call can answer.
 */
async function runningWhenCheapCallsAnswer(verifications: Record<string, () => Promise<boolean>>) {
  const running = new Set(Object.keys(verifications));
  const started = Object.entries(verifications).map(([name, verify]) => [name, verify().finally(() => running.delete(name))] as const);
  const [health, instance] = await Promise.all([
    t.clients.client(Health, "connect-json-http1").check({ service: "" }),
    t.clients.client(InstanceService, "grpc-h2c", { token: t.server.adminToken }).getInstance({}),
  ]);
  expect(health.status).toBe(HealthCheckResponse_ServingStatus.SERVING);
  expect(instance.instanceId).not.toBe("");
  const stillRunning = [...running].sort();
  const matched = Object.fromEntries(await Promise.all(started.map(async ([name, result]) => [name, await result] as const)));
  return { stillRunning, matched };
}

describe("verifying imported hashes at the maximum accepted cost", () => {
  it("verifies every scheme at its limits while the server keeps answering", { timeout: 300_000 }, async () => {
    const verifications = Object.fromEntries(costly.map((f) => [f.scheme, () => verifyImportedHash(f.hash, maxCost.password)]));
    const { stillRunning, matched } = await runningWhenCheapCallsAnswer(verifications);
    // Ordering, not timing: both calls answered while every costly verification was still running.
    expect(stillRunning).toEqual(costly.map((f) => f.scheme).sort());
    expect(matched).toEqual(Object.fromEntries(costly.map((f) => [f.scheme, true])));
    expect(await verifyImportedHash(md5.hash, maxCost.password)).toBe(true);
  });

  it("the same check catches a verification that runs on the main thread", { timeout: 60_000 }, async () => {
    // The harness's own proof: the sha512-crypt hash at 1 000 000 rounds, verified on the event loop.
    const sha512 = costly.find((f) => f.scheme === "sha512-crypt")!;
    const { stillRunning, matched } = await runningWhenCheapCallsAnswer({ "sha512-crypt": async () => checkImportedHash(sha512.hash, maxCost.password) });
    expect(stillRunning).toEqual([]);
    expect(matched).toEqual({ "sha512-crypt": true });
  });
});
