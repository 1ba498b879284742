import { setFlagsFromString } from "node:v8";

/**
 * V8's allocation-site pretenuring, switched off for Gatehouse's processes. When a scavenge finds nearly every object
 * of one allocation site alive, V8 allocates that site's later objects straight in the old generation. A bulk import
 * works in cohorts that are all alive at once and all dead soon after: a chunk of a thousand users, their rows and
 * events (planned, committed, answered), and the command's request messages. A scavenge in the middle of one finds the
 * cohort alive, so V8 tenured these sites, and every later chunk's objects became old garbage that only a full
 * collection frees: the old generation grew by megabytes a chunk, and the scavenges slowed as it grew (mostly 4-6 ms
 * after a full collection, 10-16 ms before the next). What switching it off bought is in bench/README.md ("Bulk
 * import", "Pretenuring switched off").
 */
export const NO_PRETENURING = "--no-allocation-site-pretenuring";

/**
 * The V8 flags Gatehouse sets for its process, given node's own arguments: none when the operator chose pretenuring on
 * node's command line, in any form V8 takes (one or two dashes, `no`, `no-` or `no_`, `-` or `_` between the words),
 * which then stays. NODE_OPTIONS refuses this flag, so node's command line is the only place for that choice.
 */
export function heapFlags(execArgv: readonly string[]): string[] {
  // Inside the function, not a module constant: called once a process, and its mutants are then tested, not ignored.
  const operatorChoice = /^--?(no[-_]?)?allocation[-_]site[-_]pretenuring$/;
  return execArgv.some((arg) => operatorChoice.test(arg)) ? [] : [NO_PRETENURING];
}

/**
 * Sets heapFlags, from src/main.ts once its imports are loaded and before any command runs or any worker thread starts
 * (V8's flags are the process's: the password-hashing workers run without pretenuring too). V8 consults this flag at
 * every scavenge, but switching it off does not undo the tenuring decisions it already made: it has to come before the
 * work it is for.
 */
export function tuneHeap(execArgv: readonly string[] = process.execArgv, setFlag: (flag: string) => void = setFlagsFromString): void {
  for (const flag of heapFlags(execArgv)) setFlag(flag);
}
