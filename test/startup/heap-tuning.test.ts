import { describe, expect, it } from "vitest";
import { heapFlags, NO_PRETENURING, tuneHeap } from "../../src/startup/heap-tuning.js";

// src/startup/heap-tuning.ts: Gatehouse's processes run without V8's allocation-site pretenuring, unless the operator
// chose it on node's command line.
describe("heap tuning", () => {
  it("switches allocation-site pretenuring off by default", () => {
    expect(NO_PRETENURING).toBe("--no-allocation-site-pretenuring");
    expect(heapFlags([])).toEqual([NO_PRETENURING]);
    expect(heapFlags(["--max-old-space-size=512", "--import", "tsx", "--allocation-site-tracking"])).toEqual([NO_PRETENURING]);
    expect(heapFlags(["--allocation-site-pretenuring-budget"])).toEqual([NO_PRETENURING]);
    // Another flag's value that names it, and a form V8 does not take.
    expect(heapFlags(["--title=--allocation-site-pretenuring"])).toEqual([NO_PRETENURING]);
    expect(heapFlags(["---allocation-site-pretenuring"])).toEqual([NO_PRETENURING]);
  });

  it.each([
    "--allocation-site-pretenuring",
    "--no-allocation-site-pretenuring",
    "--noallocation-site-pretenuring",
    "--allocation_site_pretenuring",
    "--no-allocation_site-pretenuring",
    "--no_allocation_site_pretenuring",
    "-allocation-site-pretenuring",
    "-noallocation-site-pretenuring",
    "-no-allocation-site-pretenuring",
  ])("leaves the operator's %s alone", (flag) => {
    expect(heapFlags(["--import", "tsx", flag])).toEqual([]);
  });

  it("sets the flags it chose, and none when the operator chose", () => {
    const set: string[] = [];
    tuneHeap(["--import", "tsx"], (flag) => set.push(flag));
    expect(set).toEqual([NO_PRETENURING]);
    tuneHeap(["--allocation-site-pretenuring"], (flag) => set.push(flag));
    expect(set).toEqual([NO_PRETENURING]);
  });
});
