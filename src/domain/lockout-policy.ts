/** The instance's lockout policy: stored as data (one row per instance), this default while none is stored. */
export interface LockoutPolicy {
  /** Wrong passwords in a row that lock the user (USER_STATE_LOCKED); 0: wrong passwords never lock. */
  maxPasswordAttempts: number;
}

export const DEFAULT_LOCKOUT_POLICY: LockoutPolicy = { maxPasswordAttempts: 10 };

/**
 * What one more wrong password does to a user who has `failedAttempts` in a row: the new count, and whether it locks
 * the user. A limit lowered below a user's count locks at that user's next wrong password.
 */
export function countWrongPassword(policy: LockoutPolicy, failedAttempts: number): { failedAttempts: number; lock: boolean } {
  const next = failedAttempts + 1;
  return { failedAttempts: next, lock: policy.maxPasswordAttempts > 0 && next >= policy.maxPasswordAttempts };
}
