import { Counter, Histogram, Registry, collectDefaultMetrics } from "prom-client";

/** Prometheus metrics of one server (a registry per server, so tests can run several in one process). */
export interface Metrics {
  registry: Registry;
  rpcCalls: Counter<"procedure" | "code">;
  rpcDuration: Histogram<"procedure" | "code">;
  deprecatedCalls: Counter<"procedure">;
  mailDeliveries: Counter<"result">;
  /** Commits made durable by one sync of the database log (group commit). */
  commitsPerSync: Histogram;
}

export function createMetrics(): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: "gatehouse_" });
  return {
    registry,
    rpcCalls: new Counter({
      name: "gatehouse_rpc_calls_total",
      help: "RPC calls by procedure and result code.",
      labelNames: ["procedure", "code"],
      registers: [registry],
    }),
    rpcDuration: new Histogram({
      name: "gatehouse_rpc_duration_seconds",
      help: "RPC latency by procedure and result code.",
      labelNames: ["procedure", "code"],
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers: [registry],
    }),
    deprecatedCalls: new Counter({
      name: "gatehouse_deprecated_calls_total",
      help: "Calls of deprecated RPCs by procedure; they may be removed in a future version.",
      labelNames: ["procedure"],
      registers: [registry],
    }),
    mailDeliveries: new Counter({
      name: "gatehouse_mail_deliveries_total",
      help: "Mail delivery attempts by result: sent, retry (transient failure) or failed (given up).",
      labelNames: ["result"],
      registers: [registry],
    }),
    commitsPerSync: new Histogram({
      name: "gatehouse_store_commits_per_sync",
      help: "Writes made durable by one sync of the database log (group commit): how many shared one disk sync.",
      buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256],
      registers: [registry],
    }),
  };
}
