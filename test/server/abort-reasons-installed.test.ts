import { describe, expect, it } from "vitest";
import { startTestServer } from "../support/server.js";

// The server's start installs the cheap abort() (src/support/abort-reasons.ts): connect aborts two controllers on
// every call without a reason, and the stack Node would capture for each was 8-10 % of a no-op call's CPU.

describe("a server's start", () => {
  it("makes abort() without a reason build no stack trace", async () => {
    const server = await startTestServer();
    try {
      const controller = new AbortController();
      controller.abort();
      expect((controller.signal.reason as DOMException).stack).toBe("AbortError: This operation was aborted");
    } finally {
      await server.dispose();
    }
  });
});
