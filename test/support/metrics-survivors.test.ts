import { describe, expect, it } from "vitest";
import { createMetrics } from "../../src/support/metrics.js";

// Every metric the server exports at /metrics is named gatehouse_… (README: gatehouse_rpc_calls_total, …), the
// process and Node.js metrics included, so they never collide with another service's on the same scrape.

describe("metric names", () => {
  it("all start with gatehouse_, the process metrics included", async () => {
    const { registry } = createMetrics();
    const names = (await registry.getMetricsAsJSON()).map((metric) => metric.name);
    expect(names.some((name) => name.includes("process_cpu"))).toBe(true);
    expect(names.filter((name) => !name.startsWith("gatehouse_"))).toEqual([]);
  });
});
