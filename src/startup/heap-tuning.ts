import { setFlagsFromString } from "node:v8";

/**
 * V8's allocation-site pretenuring, switched off for Gatehouse's processes. When a scavenge finds nearly every object
 * of one allocation site alive, V8 allocates that site's later objects straight in the old generation. Gatehouse's work
 * comes in cohorts that are all alive at once and all dead soon after: a bulk import's chunk (a thousand users, their
 * rows and events, planned, committed, answered), the command's batches, a commit batch's members. A scavenge in the
 * middle of one finds the cohort alive, so V8 tenured these sites, and every later chunk's objects became old garbage
 * that only a full collection frees; the old generation grew by megabytes a chunk, and each scavenge took longer as it
 * grew (5 ms after a full collection, 12-16 ms before the next). Without it, the import costs both processes less CPU
 * per user and the command a third less memory (bench/README.md, "Bulk import").
 */
export const NO_PRETENURING = "--no-allocation-site-pretenuring";

/**
 * The V8 flags Gatehouse sets for its process, given node's own arguments: none when the operator chose pretenuring on
 * node's command line (`--allocation-site-pretenuring`, `--no-…`, `--no…`, with `-` or `_`, `=value`), which stays.
 */
export function heapFlags(execArgv: readonly string[]): string[] {
  return execArgv.some((arg) => OPERATOR_CHOICE.test(arg)) ? [] : [NO_PRETENURING];
}

const OPERATOR_CHOICE = /^--(no-?)?allocation[-_]site[-_]pretenuring(=|$)/;

/**
 * Sets heapFlags: first thing in the process (src/main.ts), before the work they are for allocates anything. V8 reads
 * this flag when a scavenge weighs its sites' survival, so setting it at run time takes effect from the next scavenge.
 */
export function tuneHeap(execArgv: readonly string[] = process.execArgv, setFlag: (flag: string) => void = setFlagsFromString): void {
  for (const flag of heapFlags(execArgv)) setFlag(flag);
}
