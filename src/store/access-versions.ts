import { accessScope, type Commit } from "./commit.js";

/** How many counts the users are spread over: a user's principal is dropped also when another of its bucket changed. */
const USER_BUCKETS = 4096;

/** FNV-1a of the id: ids are random, so any spread will do; the same id always lands in the same bucket. */
function bucketOf(userId: string): number {
  let hash = 0x811c9dc5;
  // Stryker disable next-line EqualityOperator: `<=` reads one NaN past the end, which XORs as 0: another spread, as good (`>=` hashes nothing: every user in one bucket, which the tests catch)
  for (let i = 0; i < userId.length; i++) hash = Math.imul(hash ^ userId.charCodeAt(i), 0x01000193);
  return (hash >>> 0) % USER_BUCKETS;
}

/**
 * One process's access versions (Store.accessVersion), counted as its commits are applied: one count of every commit
 * that may change a principal, one of those that may change anyone's, and one per bucket of users for those that name
 * their users (accessScope). A user's version is the everyone count with the count of its bucket, so a new membership
 * of one user leaves every other user's cached principal in place (but those sharing its bucket, one in 4 096).
 * Memory is fixed: one count per bucket, not per user.
 */
export function createAccessVersions() {
  let all = 0;
  let everyone = 0;
  const buckets = new Float64Array(USER_BUCKETS);
  return {
    /**
     * Counts an applied commit. (Counting down would do as well, Stryker's AssignmentOperator mutants here: a version
     * only has to differ from every earlier one, and each count only ever moves one way.)
     */
    note(commit: Commit): void {
      const scope = accessScope(commit);
      // Stryker disable next-line AssignmentOperator: as above
      if (scope === "everyone") everyone += 1;
      else if (scope.length === 0) return;
      else {
        // Stryker disable next-line AssignmentOperator: as above
        for (const userId of scope) buckets[bucketOf(userId)]! += 1;
      }
      // Stryker disable next-line AssignmentOperator: as above
      all += 1;
    },
    /** The version of every principal (no user), or of the principals of one user. */
    of(userId?: string): string {
      return userId === undefined ? String(all) : `${everyone}.${buckets[bucketOf(userId)]}`;
    },
  };
}
