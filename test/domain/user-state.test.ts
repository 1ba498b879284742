import { describe, expect, it } from "vitest";
import { DomainError } from "../../src/domain/errors.js";
import { planStateChange, refuseSelf, requireMaySignIn, type UserFlags, visibleState } from "../../src/domain/user-state.js";
import { thrownBy } from "../support/thrown.js";

const refusal = (action: () => unknown): DomainError => thrownBy(DomainError, action);

const user = (over: Partial<UserFlags> = {}): UserFlags => ({ state: "active", inactive: false, locked: false, ...over });

describe("user state flags", () => {
  it("shows inactive over locked, locked over the initialization state", () => {
    expect(visibleState(user({ inactive: true, locked: true, state: "initial" }))).toBe("inactive");
    expect(visibleState(user({ locked: true, state: "initial" }))).toBe("locked");
    expect(visibleState(user({ state: "initial" }))).toBe("initial");
    expect(visibleState(user())).toBe("active");
  });

  it("each change sets its own flag, leaving the other and the initialization state alone", () => {
    expect(planStateChange(user({ locked: true }), "deactivate")).toEqual({ flag: "inactive", value: true });
    expect(planStateChange(user({ inactive: true, locked: true }), "reactivate")).toEqual({ flag: "inactive", value: false });
    expect(planStateChange(user({ inactive: true }), "lock")).toEqual({ flag: "locked", value: true });
    expect(planStateChange(user({ locked: true, inactive: true }), "unlock")).toEqual({ flag: "locked", value: false });
  });

  it.each([
    ["deactivate", { inactive: true }, "user.already_inactive", /inactive/],
    ["reactivate", { inactive: false }, "user.not_inactive", /inactive/],
    ["lock", { locked: true }, "user.already_locked", /locked/],
    ["unlock", { locked: false }, "user.not_locked", /locked/],
  ] as const)("%s is a failed_precondition when the flag already has its value", (change, flags, reason, explanation) => {
    const error = refusal(() => planStateChange(user(flags), change));
    expect(error).toMatchObject({ kind: "failed_precondition", reason });
    expect(error.message).toMatch(explanation);
  });

  it("a user cannot shut itself out", () => {
    expect(() => refuseSelf("u1", "u2")).not.toThrow();
    const error = refusal(() => refuseSelf("u1", "u1"));
    expect(error).toMatchObject({ kind: "failed_precondition", reason: "user.self" });
    expect(error.message).toMatch(/itself/);
  });

  it("refuses the tokens of an inactive user first, then of a locked one", () => {
    expect(() => requireMaySignIn({ inactive: false, locked: false })).not.toThrow();
    const inactive = refusal(() => requireMaySignIn({ inactive: true, locked: true }));
    expect(inactive).toMatchObject({ kind: "unauthenticated", reason: "user.inactive" });
    expect(inactive.message).toMatch(/deactivated/);
    const locked = refusal(() => requireMaySignIn({ inactive: false, locked: true }));
    expect(locked).toMatchObject({ kind: "unauthenticated", reason: "user.locked" });
    expect(locked.message).toMatch(/locked/);
  });
});
