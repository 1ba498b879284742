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

  it.each([
    ["an error too (a conflict may come from rows not yet durable)", "already exists", async () => Promise.reject(new Error("already exists"))],
    [
      "an error thrown before the inner call made its promise, answered as a rejection",
      "refused at once",
      () => {
        throw new Error("refused at once");
      },
    ],
  ])("holds %s", async (_, message, next: () => Promise<UnaryResponse>) => {
    const barrier = heldBarrier();
    let out = false;
    const call = createDurabilityInterceptor(barrier.store)(next as never)(request).catch((error: unknown) => {
      out = true;
      return error;
    });
    await tick();
    expect(barrier.asked()).toBe(1);
    expect(out).toBe(false);
    barrier.open();
    expect(await call).toMatchObject({ message });
  });

  it("answers with the barrier's own failure when the disk could not be synced", async () => {
    const synced = new Error("store.sync_failed");
    const call = createDurabilityInterceptor({ durable: () => Promise.reject(synced) })(async () => answer)(request);
    await expect(call).rejects.toBe(synced);
  });
});
