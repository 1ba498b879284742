import { describe, expect, it } from "vitest";
import { createMetrics } from "../../src/support/metrics.js";

// What /metrics exports (src/support/metrics.ts, README "Health and monitoring"): every metric is named gatehouse_…,
// the process and Node.js metrics included, so they never collide with another service's on the same scrape; the
// RPC calls and their latency histogram by procedure and code, deprecated calls by procedure, and mail deliveries
// by result are all in the server's registry.

describe("metric names", () => {
  it("all start with gatehouse_, the process metrics included", async () => {
    const { registry } = createMetrics();
    const names = (await registry.getMetricsAsJSON()).map((metric) => metric.name);
    expect(names.some((name) => name.includes("process_cpu"))).toBe(true);
    expect(names.filter((name) => !name.startsWith("gatehouse_"))).toEqual([]);
  });
});

describe("the server's own metrics", () => {
  it("are exported with the labels README names", async () => {
    const metrics = createMetrics();
    metrics.rpcCalls.inc({ procedure: "/gatehouse.admin.v1.UserService/GetUser", code: "ok" });
    metrics.rpcDuration.observe({ procedure: "/gatehouse.admin.v1.UserService/GetUser", code: "ok" }, 0.003);
    metrics.deprecatedCalls.inc({ procedure: "/gatehouse.admin.v1.IdpService/UpdateIdp" });
    metrics.mailDeliveries.inc({ result: "failed" });
    const text = await metrics.registry.metrics();
    expect(text).toContain('gatehouse_rpc_calls_total{procedure="/gatehouse.admin.v1.UserService/GetUser",code="ok"} 1');
    expect(text).toContain('gatehouse_rpc_duration_seconds_count{procedure="/gatehouse.admin.v1.UserService/GetUser",code="ok"} 1');
    expect(text).toContain('gatehouse_deprecated_calls_total{procedure="/gatehouse.admin.v1.IdpService/UpdateIdp"} 1');
    expect(text).toContain('gatehouse_mail_deliveries_total{result="failed"} 1');
  });

  it("the latency histogram tells a millisecond call from a one-second one", async () => {
    const metrics = createMetrics();
    const labels = { procedure: "/p", code: "ok" };
    metrics.rpcDuration.observe(labels, 0.001);
    metrics.rpcDuration.observe(labels, 1);
    const buckets = (await metrics.rpcDuration.get()).values.filter((value) => value.metricName === "gatehouse_rpc_duration_seconds_bucket");
    const finite = buckets.filter((bucket) => (bucket.labels as Record<string, unknown>).le !== "+Inf");
    // Some bucket holds the fast call and not the slow one, and a finite one holds both.
    expect(finite.some((bucket) => bucket.value === 1)).toBe(true);
    expect(finite.some((bucket) => bucket.value === 2)).toBe(true);
  });
});
