import { failedPrecondition, unauthenticated } from "./errors.js";

/**
 * Deactivation and locks are two independent flags beside the initialization state, so neither
 * overwrites the other or the initialization progress: reactivating gives back exactly what was
 * (ACTIVE, INITIAL, or still LOCKED), and a lock set for security survives a deactivate/reactivate.
 */
export interface UserFlags {
  state: "active" | "initial";
  inactive: boolean;
  locked: boolean;
}

export type VisibleState = "active" | "initial" | "inactive" | "locked";

/** The one state GetUser/ListUsers show: inactive over locked (the longer-lived hold), then initialization. */
export function visibleState(user: UserFlags): VisibleState {
  if (user.inactive) return "inactive";
  if (user.locked) return "locked";
  return user.state;
}

export type UserStateChange = "deactivate" | "reactivate" | "lock" | "unlock";

/** Which flag a change sets to which value, or the failed_precondition its current value means. */
export function planStateChange(user: UserFlags, change: UserStateChange): { flag: "inactive" | "locked"; value: boolean } {
  switch (change) {
    case "deactivate":
      if (user.inactive) throw failedPrecondition("user.already_inactive", "the user is inactive already");
      return { flag: "inactive", value: true };
    case "reactivate":
      if (!user.inactive) throw failedPrecondition("user.not_inactive", "the user is not inactive");
      return { flag: "inactive", value: false };
    case "lock":
      if (user.locked) throw failedPrecondition("user.already_locked", "the user is locked already");
      return { flag: "locked", value: true };
    case "unlock":
      if (!user.locked) throw failedPrecondition("user.not_locked", "the user is not locked");
      return { flag: "locked", value: false };
  }
}

/** Changes that would shut the caller out if it made them on itself (deactivate, lock, remove). */
export function refuseSelf(callerId: string, targetId: string): void {
  if (callerId === targetId) throw failedPrecondition("user.self", "a user cannot deactivate, lock or remove itself");
}

/** Throws unauthenticated when the user's tokens must be refused (inactive first, then locked). */
export function requireMaySignIn(user: { inactive: boolean; locked: boolean }): void {
  if (user.inactive) throw unauthenticated("user.inactive", "the user is deactivated");
  if (user.locked) throw unauthenticated("user.locked", "the user is locked");
}
