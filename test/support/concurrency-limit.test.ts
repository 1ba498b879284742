import { describe, expect, it } from "vitest";
import { createConcurrencyLimit } from "../../src/support/concurrency-limit.js";

/** A task the test finishes by hand, recording when it started. */
function gate(started: string[], name: string) {
  let finish = () => {};
  const done = new Promise<void>((resolve) => (finish = resolve));
  return { task: async () => (started.push(name), await done, name), finish };
}

/** Lets every pending promise reaction run (no timer: the limit hands slots on in microtasks). */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

describe("the concurrency limit (bulk import's password work)", () => {
  it("runs at most `size` tasks at once, the others first come first served", async () => {
    const limit = createConcurrencyLimit(2);
    const started: string[] = [];
    const [a, b, c, d] = ["a", "b", "c", "d"].map((name) => gate(started, name));
    const results = [a, b, c, d].map((g) => limit(g!.task));
    await settle();
    expect(started).toEqual(["a", "b"]);
    b!.finish();
    await settle();
    expect(started).toEqual(["a", "b", "c"]);
    a!.finish();
    c!.finish();
    d!.finish();
    expect(await Promise.all(results)).toEqual(["a", "b", "c", "d"]);
  });

  it("a waiting task whose call went away never runs: when a slot frees it is passed over with the signal's reason, and the next one takes the slot", async () => {
    const limit = createConcurrencyLimit(1);
    const started: string[] = [];
    const [a, b, c] = ["a", "b", "c"].map((name) => gate(started, name));
    const call = new AbortController();
    const first = limit(a!.task);
    const abandoned = limit(b!.task, call.signal);
    const alsoAbandoned = limit(b!.task, call.signal);
    const later = limit(c!.task);
    await settle();
    const gone = new Error("the caller went away");
    call.abort(gone);
    a!.finish();
    await first;
    await expect(abandoned).rejects.toBe(gone);
    await expect(alsoAbandoned).rejects.toBe(gone);
    await settle();
    expect(started).toEqual(["a", "c"]);
    c!.finish();
    expect(await later).toBe("c");
    // The slot went back: a new task runs at once.
    const [d] = ["d"].map((name) => gate(started, name));
    const last = limit(d!.task);
    await settle();
    expect(started).toEqual(["a", "c", "d"]);
    d!.finish();
    await last;
  });

  it("when every waiting task's call went away, the freed slot is free: the next task runs at once, and never more than `size`", async () => {
    const limit = createConcurrencyLimit(1);
    const started: string[] = [];
    const [a, b, c, d] = ["a", "b", "c", "d"].map((name) => gate(started, name));
    const call = new AbortController();
    const first = limit(a!.task);
    const abandoned = limit(b!.task, call.signal);
    call.abort(new Error("gone"));
    a!.finish();
    await first;
    await expect(abandoned).rejects.toThrow("gone");
    const next = limit(c!.task);
    const after = limit(d!.task);
    await settle();
    expect(started).toEqual(["a", "c"]);
    c!.finish();
    await next;
    await settle();
    expect(started).toEqual(["a", "c", "d"]);
    d!.finish();
    await after;
  });

  it("a task whose call is already over is refused at once; one already running finishes and hands its slot on", async () => {
    const limit = createConcurrencyLimit(1);
    const started: string[] = [];
    const [a, b, c] = ["a", "b", "c"].map((name) => gate(started, name));
    const over = new AbortController();
    over.abort(new Error("over"));
    await expect(limit(a!.task, over.signal)).rejects.toThrow("over");
    const call = new AbortController();
    const running = limit(b!.task, call.signal);
    const next = limit(c!.task);
    await settle();
    call.abort(new Error("gone meanwhile"));
    b!.finish();
    expect(await running).toBe("b");
    await settle();
    expect(started).toEqual(["b", "c"]);
    c!.finish();
    expect(await next).toBe("c");
  });

  it("an abort after a waiting task got its slot changes nothing for it, and never frees a slot twice", async () => {
    const limit = createConcurrencyLimit(1);
    const started: string[] = [];
    const [a, b, c] = ["a", "b", "c"].map((name) => gate(started, name));
    const call = new AbortController();
    const first = limit(a!.task);
    const second = limit(b!.task, call.signal);
    a!.finish();
    await first;
    await settle();
    call.abort(new Error("late"));
    const third = limit(c!.task);
    await settle();
    expect(started).toEqual(["a", "b"]);
    b!.finish();
    expect(await second).toBe("b");
    await settle();
    expect(started).toEqual(["a", "b", "c"]);
    c!.finish();
    await third;
  });
});
