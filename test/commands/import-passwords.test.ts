import { availableParallelism } from "node:os";
import { describe, expect, it } from "vitest";
import { hashImportedPassword, isStoredPassword } from "../../src/commands/import-passwords.js";
import { closeImportedHashVerifier } from "../../src/support/password-verify/verify.js";
import { BCRYPT_HASH } from "../support/import.js";

/** The organization of the users whose hashes these are (the verifier pool's owner). */
const ORG = "org-1";

/**
 * Whether a re-imported plain password is the user's stored one (user.proto, ON_CONFLICT_UPDATE: "a plain password is
 * verified against the stored hash, so the same password is no change").
 */
describe("a re-imported plain password against the stored hash", () => {
  it("is the same password only when the hash verifies it", async () => {
    expect(await isStoredPassword(BCRYPT_HASH, "Analytical-Engine-1843", ORG)).toBe(true);
    expect(await isStoredPassword(BCRYPT_HASH, "Analytical-Engine-1844", ORG)).toBe(false);
  });

  it("counts a stored value the verifier cannot read as another password (the new one replaces it), not as a failure of the import", async () => {
    expect(await isStoredPassword("$2b$04$not-a-bcrypt-hash", "Analytical-Engine-1843", ORG)).toBe(false);
    expect(await isStoredPassword("plain text", "plain text", ORG)).toBe(false);
  });

  it("is not answered, true or false, when the verification itself fails (the verifier shut down under it): that failure is", async () => {
    // Cost 14 keeps the verifier's thread busy for about a second, so its answer cannot arrive while the verifier shuts
    // down (at cost 4 it sometimes did, and the call answered true).
    const answer = isStoredPassword(BCRYPT_HASH.replace(/^\$2b\$\d\d\$/, "$2b$14$"), "Analytical-Engine-1843", ORG);
    await closeImportedHashVerifier();
    await expect(answer).rejects.toMatchObject({ kind: "unavailable", reason: "password_verify.closed" });
    // A later verification starts a fresh verifier.
    expect(await isStoredPassword(BCRYPT_HASH, "Analytical-Engine-1843", ORG)).toBe(true);
  });

  it("is not answered for a call that is over: the verification never runs", async () => {
    const over = new AbortController();
    const reason = new Error("the import's call ended");
    over.abort(reason);
    await expect(isStoredPassword(BCRYPT_HASH, "Analytical-Engine-1843", ORG, over.signal)).rejects.toBe(reason);
  });
});

describe("one organization's costly re-import", () => {
  // Stored hashes of cost 13 take about half a second each to check; twice as many as the verifications one
  // organization may run at once keep its share busy while the others' work arrives.
  const costly = BCRYPT_HASH.replace(/^\$2b\$\d\d\$/, "$2b$13$");
  const costlyChecks = () => Array.from({ length: 2 * availableParallelism() }, () => isStoredPassword(costly, "Analytical-Engine-1843", "org-costly"));

  it("holds no other organization's re-import: its check of a cheap stored hash answers first", async () => {
    const order: string[] = [];
    const costlyOnes = costlyChecks().map((check) => check.then(() => order.push("costly")));
    const other = isStoredPassword(BCRYPT_HASH, "Analytical-Engine-1843", "org-other").then((same) => order.push(`other ${same}`));
    await Promise.all([...costlyOnes, other]);
    expect(order[0]).toBe("other true");
  }, 60_000);

  it("is held back by its organization's limit, not refused: a chunk's checks never fill the verifier's queue", async () => {
    // More than the verifier lets wait (256): each organization runs one per core and holds the rest itself.
    const checks = Array.from({ length: 300 }, () => isStoredPassword(BCRYPT_HASH, "Analytical-Engine-1843", "org-chunk"));
    expect(await Promise.all(checks)).toEqual(checks.map(() => true));
  }, 60_000);

  it("holds no import's hashing of plain passwords", async () => {
    const order: string[] = [];
    const costlyOnes = costlyChecks().map((check) => check.then(() => order.push("costly")));
    const hashing = hashImportedPassword("Analytical-Engine-1843").then(() => order.push("hashed"));
    await Promise.all([...costlyOnes, hashing]);
    expect(order[0]).toBe("hashed");
  }, 60_000);
});
