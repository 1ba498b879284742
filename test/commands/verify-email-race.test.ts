import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { issueCode } from "../../src/commands/one-time-code.js";
import { verifyEmail } from "../../src/commands/email-verification.js";
import type { Caller, Deps } from "../../src/context.js";
import { DomainError } from "../../src/domain/errors.js";
import { createSqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import { createIdGenerator } from "../../src/support/ids.js";
import { TestClock } from "../support/server.js";
import { withSlowReads } from "../support/slow-store.js";

const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach((dir) => rmSync(dir, { recursive: true, force: true })));

describe("VerifyEmail with interleaving requests", () => {
  it("counts every concurrent wrong attempt: no more than five are ever judged", async () => {
    const dir = mkdtempSync(join(tmpdir(), "gatehouse-race-"));
    dirs.push(dir);
    const sqlite = createSqliteStore({ path: join(dir, "db.sqlite"), synchronous: "NORMAL", busyTimeoutMs: 1000 });
    const clock = new TestClock();
    const deps: Deps = { store: withSlowReads(sqlite, () => 2 + Math.random() * 5), clock, ids: createIdGenerator(), masterKey: randomBytes(32), externalUrl: "http://localhost" };
    const at = clock.now();
    const user = { id: "u1", orgId: "o1" };
    const code = issueCode(deps, user, "email", at);
    await sqlite.commit({
      instanceId: "i1",
      actor: "test",
      at,
      writes: [
        { kind: "instance.insert", row: { id: "i1", name: "I", defaultOrgId: "o1" } },
        { kind: "organization.insert", row: { id: "o1", instanceId: "i1", name: "O", nameKey: "o", state: "active" } },
        { kind: "user.insert", row: { id: "u1", instanceId: "i1", orgId: "o1", type: "human", state: "initial", userName: "u", userNameKey: "u", email: "u@example.com", emailVerified: false } },
        code.write,
      ],
      events: [],
    });
    const caller: Caller = { principal: { userId: "u1", orgId: "o1", instanceId: "i1", tokenId: "t", memberships: [] }, requestedOrgId: undefined };
    const wrong = Array.from({ length: 25 }, (_, i) => `Z${String(i).padStart(5, "0")}`);
    const outcomes = await Promise.allSettled([...wrong, code.code].map((verificationCode) => verifyEmail(deps, caller, { userId: "u1", verificationCode })));
    // Only the first five attempts to reach the store may be judged against the code: a judged wrong
    // code says how many attempts are left; attempts that find the code used or void answer
    // email_code.invalid / email_code.exhausted without being judged.
    const judged = outcomes.filter((o) => o.status === "fulfilled" || (o.reason as DomainError).metadata["attemptsLeft"] !== undefined);
    expect(judged.length).toBeLessThanOrEqual(5);
    expect((await sqlite.findCode("u1", "email"))?.attempts).toBeLessThanOrEqual(5);
    await sqlite.close();
  });
});
