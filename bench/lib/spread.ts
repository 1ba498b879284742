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
 * Consecutive slices of one generator's run (a window measured in turns with its reference) as one: requests and
 * unexpected answers summed, req/s over the slices' time together (`windowSeconds`: each slice's window), a sequence
 * that ran out in any slice counts. p50 and p99 are the highest of the slices' (the generators print percentiles, not
 * distributions): an upper bound.
 */
export function joinSlices(slices: Measurement[], windowSeconds: number[]): Measurement {
  if (slices.length === 1) return slices[0]!;
  const sum = (pick: (m: Measurement, i: number) => number) => slices.reduce((total, m, i) => total + pick(m, i), 0);
  const requests = sum((m) => m.requests);
  // A slice's own duration where the generator measured one (its rate), else its window (no call finished in it).
  const seconds = sum((m, i) => (m.rps > 0 ? m.requests / m.rps : windowSeconds[i]!));
  return {
    requests,
    rps: seconds > 0 ? requests / seconds : 0,
    p50Ms: Math.max(...slices.map((m) => m.p50Ms)),
    p99Ms: Math.max(...slices.map((m) => m.p99Ms)),
    unexpected: sum((m) => m.unexpected),
    wrapped: slices.some((m) => m.wrapped),
    raw: { slices: slices.map((m) => m.raw ?? {}) },
  };
}
