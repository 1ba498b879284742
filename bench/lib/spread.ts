import type { Measurement } from "./drivers.js";

/**
 * How a run's load is spread over several replicas: one generator per replica, started together, the run's
 * connections split between them, and their figures put back together as one row.
 */

/** `total` split into `parts` whole numbers as even as can be, the larger first: 16 in 3 → 6, 5, 5. */
export function splitEvenly(total: number, parts: number): number[] {
  return Array.from({ length: parts }, (_, i) => Math.floor(total / parts) + (i < total % parts ? 1 : 0));
}

/**
 * The generators' figures as one: requests and req/s summed (they ran over the same window), unexpected answers
 * summed, a sequence that ran out anywhere counts. The generators print percentiles, not their distributions, so p50
 * and p99 are the highest of theirs — the worst replica's, an upper bound of the merged distribution's.
 */
export function combineMeasurements(measurements: Measurement[]): Measurement {
  if (measurements.length === 1) return measurements[0]!;
  const sum = (pick: (m: Measurement) => number) => measurements.reduce((total, m) => total + pick(m), 0);
  const worst = (pick: (m: Measurement) => number) => Math.max(...measurements.map(pick));
  return {
    requests: sum((m) => m.requests),
    rps: sum((m) => m.rps),
    p50Ms: worst((m) => m.p50Ms),
    p99Ms: worst((m) => m.p99Ms),
    unexpected: sum((m) => m.unexpected),
    wrapped: measurements.some((m) => m.wrapped),
    raw: { generators: measurements.map((m) => m.raw ?? {}) },
  };
}

/**
 * Several runs of one generator as one (a reference's runs before and after the run it is a reference for):
 * requests and unexpected answers summed, req/s over their time together (each run's requests over its rate), a
 * sequence that ran out in any counts. p50 and p99 are the highest of the runs' (the generators print percentiles,
 * not distributions): an upper bound. A run that finished no call adds no time; the integrity line catches a
 * reference without calls.
 */
export function joinRuns(runs: Measurement[]): Measurement {
  if (runs.length === 1) return runs[0]!;
  const sum = (pick: (m: Measurement) => number) => runs.reduce((total, m) => total + pick(m), 0);
  const requests = sum((m) => m.requests);
  const seconds = sum((m) => (m.rps > 0 ? m.requests / m.rps : 0));
  return {
    requests,
    rps: seconds > 0 ? requests / seconds : 0,
    p50Ms: Math.max(...runs.map((m) => m.p50Ms)),
    p99Ms: Math.max(...runs.map((m) => m.p99Ms)),
    unexpected: sum((m) => m.unexpected),
    wrapped: runs.some((m) => m.wrapped),
    raw: { runs: runs.map((m) => m.raw ?? {}) },
  };
}
