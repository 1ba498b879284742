import { describe, expect, it } from "vitest";
import { leaseFor } from "../../src/notify/delivery-worker.js";

// README, "Mail delivery": a pass claims up to 5 due messages under a lease of 5 × 3 SMTP timeouts + 2 s (152 s at the
// default GATEHOUSE_SMTP_TIMEOUT_MS of 10 s): each send may wait out the relay three times (connecting, the greeting,
// one stalled step), and the records need the last 2 s.
describe("the lease of a claim", () => {
  it("is three SMTP timeouts per claimed message plus 2 s: 152 s for 5 messages at the default 10 s", () => {
    expect(leaseFor(5, 10_000)).toBe(152_000);
  });

  it("grows with the claim and with the timeout, and never drops below the 2 s for the records", () => {
    expect(leaseFor(1, 10_000)).toBe(32_000);
    expect(leaseFor(5, 300)).toBe(6_500);
    expect(leaseFor(0, 10_000)).toBe(2_000);
  });
});
