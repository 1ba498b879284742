import { Code } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { DomainError, invalidArgument } from "../../src/domain/errors.js";
import { fromDomainError } from "../../src/interceptors/error-mapping.js";
import { withoutStack } from "../../src/support/stackless.js";

// src/domain/errors.ts and src/support/stackless.ts: an expected failure (a DomainError) and the wire error it becomes
// are made without stack frames — they are answered, not debugged — while every other error keeps its stack, and a
// read-only Error.stackTraceLimit makes them keep theirs instead of failing.

const frames = (error: Error) => (error.stack ?? "").split("\n").filter((line) => line.trimStart().startsWith("at "));

describe("expected failures without a stack", () => {
  it("makes a DomainError and its wire error without stack frames, and keeps what they say", () => {
    const error = invalidArgument("user.code_invalid", "the code is not valid", [{ field: "code", description: "wrong" }]);
    expect(frames(error)).toEqual([]);
    expect({ kind: error.kind, reason: error.reason, message: error.message, name: error.name }).toEqual({
      kind: "invalid_argument",
      reason: "user.code_invalid",
      message: "the code is not valid",
      name: "DomainError",
    });
    const wire = fromDomainError(error);
    expect(frames(wire)).toEqual([]);
    expect(wire.code).toBe(Code.InvalidArgument);
    expect(wire.rawMessage).toBe("the code is not valid");
  });

  it("keeps the stack of every other error, before and after", () => {
    const limit = Error.stackTraceLimit;
    expect(frames(new Error("before")).length).toBeGreaterThan(0);
    new DomainError("not_found", "user.not_found", "no such user");
    withoutStack(() => new Error("inside"));
    expect(Error.stackTraceLimit).toBe(limit);
    expect(frames(new Error("after")).length).toBeGreaterThan(0);
  });

  it("still makes them, with a stack, where Error.stackTraceLimit was made read-only", () => {
    const limit = Error.stackTraceLimit;
    Object.defineProperty(Error, "stackTraceLimit", { writable: false });
    try {
      expect(frames(new DomainError("not_found", "user.not_found", "no such user")).length).toBeGreaterThan(0);
      expect(frames(withoutStack(() => new Error("inside"))).length).toBeGreaterThan(0);
    } finally {
      Object.defineProperty(Error, "stackTraceLimit", { writable: true, value: limit });
    }
  });
});
