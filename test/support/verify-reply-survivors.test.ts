import { readFileSync } from "node:fs";
import { threadId } from "node:worker_threads";
import { describe, expect, it } from "vitest";
import { answerJob } from "../../src/support/password-verify/verify-reply.js";

// What a verifier thread answers for one job (src/support/password-verify/verify-reply.ts): the job's id, the thread
// that did the work and whether the password matches; for a job it cannot verify, that it failed, naming the
// error's class only — never a message, which could quote the hash or the password.

const fixtures = JSON.parse(readFileSync(new URL("../fixtures/password-hashes/hashes.json", import.meta.url), "utf8")) as {
  password: string;
  hashes: { scheme: string; hash: string }[];
};
const md5 = fixtures.hashes.find((f) => f.scheme === "md5-crypt")!.hash;

describe("the answer to a verification job", () => {
  it("carries the job's id, the thread and whether the password matches", () => {
    expect(answerJob({ id: 41, encoded: md5, password: fixtures.password })).toEqual({ id: 41, threadId, matches: true });
    expect(answerJob({ id: 42, encoded: md5, password: `${fixtures.password}x` })).toEqual({ id: 42, threadId, matches: false });
  });

  it("for a job it cannot verify says it failed, with the error's class only: no password, no hash", () => {
    const password = "s3cret-password";
    const encoded = `$1$${password}$toolong`;
    const reply = answerJob({ id: 7, encoded, password });
    expect(reply).toEqual({ id: 7, threadId, failed: "DomainError" });
    expect(JSON.stringify(reply)).not.toContain(password);
  });
});
