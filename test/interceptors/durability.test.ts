import type { UnaryRequest, UnaryResponse } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { createDurabilityInterceptor } from "../../src/interceptors/durability.js";

// Every answer waits until the state it reflects is durable (group commit: a commit is visible before its disk sync
// is done). Here the barrier is held, and the answer — a success or an error — must not come out before it opens.

function heldBarrier() {
  let open = () => {};
  const opened = new Promise<void>((resolve) => (open = resolve));
  let asked = 0;
  return {
    store: {
      durable: () => {
        asked += 1;
        return opened;
      },
    },
    open,
    asked: () => asked,
  };
}

const request = {} as UnaryRequest;
const answer = { message: {} } as UnaryResponse;
const tick = () => new Promise((resolve) => setImmediate(resolve));

describe("the durability barrier", () => {
  it("holds a success until everything committed is durable", async () => {
    const barrier = heldBarrier();
    let out = false;
    const call = createDurabilityInterceptor(barrier.store)(async () => answer)(request).then((res) => {
      out = true;
      return res;
    });
    await tick();
    expect(barrier.asked()).toBe(1);
    expect(out).toBe(false);
    barrier.open();
    expect(await call).toBe(answer);
  });

  it("holds an error too (a conflict may come from rows not yet durable)", async () => {
    const barrier = heldBarrier();
    let out = false;
    const failure = new Error("already exists");
    const call = createDurabilityInterceptor(barrier.store)(async () => {
      throw failure;
    })(request).catch((error: unknown) => {
      out = true;
      return error;
    });
    await tick();
    expect(barrier.asked()).toBe(1);
    expect(out).toBe(false);
    barrier.open();
    expect(await call).toBe(failure);
  });

  it("holds an error thrown before the inner call made its promise, and answers it as a rejection", async () => {
    const barrier = heldBarrier();
    let out = false;
    const failure = new Error("refused at once");
    const call = createDurabilityInterceptor(barrier.store)(() => {
      throw failure;
    })(request).catch((error: unknown) => {
      out = true;
      return error;
    });
    await tick();
    expect(barrier.asked()).toBe(1);
    expect(out).toBe(false);
    barrier.open();
    expect(await call).toBe(failure);
  });

  it("answers with the barrier's own failure when the disk could not be synced", async () => {
    const synced = new Error("store.sync_failed");
    const call = createDurabilityInterceptor({ durable: () => Promise.reject(synced) })(async () => answer)(request);
    await expect(call).rejects.toBe(synced);
  });
});
