import { describe, expect, it } from "vitest";
import { installStacklessAbortReasons } from "../../src/support/abort-reasons.js";

// src/support/abort-reasons.ts: once installed (the server does at its start), `abort()` without a reason still gives
// the signal a fresh AbortError DOMException, as the DOM standard says, only without stack frames; a reason the caller
// passes is the signal's reason as it is; the stack limit of every other error is untouched; installing again changes
// nothing.

describe("abort reasons without a stack", () => {
  it("gives abort() without a reason a fresh AbortError, without stack frames", () => {
    installStacklessAbortReasons();
    const [first, second] = [new AbortController(), new AbortController()];
    first.abort();
    second.abort();
    const reason = first.signal.reason as DOMException;
    expect(first.signal.aborted).toBe(true);
    expect(reason).toBeInstanceOf(DOMException);
    expect({ name: reason.name, message: reason.message, code: reason.code }).toEqual({ name: "AbortError", message: "This operation was aborted", code: DOMException.ABORT_ERR });
    expect(reason.stack).toBe("AbortError: This operation was aborted");
    expect(second.signal.reason).not.toBe(reason);
  });

  it("keeps the reason a caller passes, and the stack of every other error", () => {
    installStacklessAbortReasons();
    const limit = Error.stackTraceLimit;
    const controller = new AbortController();
    const reason = new Error("gone");
    let heard: unknown;
    controller.signal.addEventListener("abort", () => (heard = controller.signal.reason));
    controller.abort(reason);
    expect(heard).toBe(reason);
    new AbortController().abort();
    expect(Error.stackTraceLimit).toBe(limit);
    expect(new Error("later").stack).toContain("abort-reasons.test");
  });

  it("still aborts, with a stack, where Error.stackTraceLimit was made read-only", () => {
    installStacklessAbortReasons();
    const limit = Error.stackTraceLimit;
    Object.defineProperty(Error, "stackTraceLimit", { writable: false });
    try {
      const controller = new AbortController();
      controller.abort();
      expect((controller.signal.reason as DOMException).name).toBe("AbortError");
      expect((controller.signal.reason as DOMException).stack).toContain("abort-reasons");
    } finally {
      Object.defineProperty(Error, "stackTraceLimit", { writable: true, value: limit });
    }
  });

  it("installs once, keeping the method's own property flags", () => {
    installStacklessAbortReasons();
    const installed = AbortController.prototype.abort;
    installStacklessAbortReasons();
    expect(AbortController.prototype.abort).toBe(installed);
    const { writable, enumerable, configurable } = Object.getOwnPropertyDescriptor(AbortController.prototype, "abort")!;
    expect({ writable, enumerable, configurable }).toEqual({ writable: true, enumerable: true, configurable: true });
  });
});
