import { describe, expect, it } from "vitest";
import { createHeldBytes } from "../../src/transport/held-bytes.js";
import { createEnvelopeSplitter } from "../../src/transport/envelope-splitter.js";

// A request body arrives in network chunks of any size, down to one byte each. What the transport holds of it while it
// waits for the rest costs the bytes themselves — at most twice them, within the size the caller allows — not an
// object per chunk: a hostile client sending a body a byte at a time must not make the server hold more than it sent.
describe("bytes held while a body arrives", () => {
  it("come out whole and in order, however they were cut", () => {
    const held = createHeldBytes();
    const body = Uint8Array.from({ length: 1000 }, (_, i) => i % 251);
    for (let i = 0; i < body.length; i += 7) held.add(body.subarray(i, i + 7), body.length);
    expect(held.size).toBe(body.length);
    expect([...held.take()]).toEqual([...body]);
    expect(held.size).toBe(0);
  });

  it("a body in one chunk is handed on as it came, without a copy", () => {
    const held = createHeldBytes();
    const chunk = Uint8Array.of(1, 2, 3);
    held.add(chunk, 100);
    expect(held.take()).toBe(chunk);
  });

  it("never in a buffer larger than the caller allows, nor more than twice what was held", () => {
    const held = createHeldBytes();
    for (let i = 0; i < 100_000; i++) held.add(Uint8Array.of(i % 256), 100_000);
    const taken = held.take();
    expect(taken.length).toBe(100_000);
    expect(taken.buffer.byteLength).toBeLessThanOrEqual(100_000);
    const small = createHeldBytes();
    for (let i = 0; i < 3_000; i++) small.add(Uint8Array.of(7), 1_000_000);
    expect(small.take().buffer.byteLength).toBeLessThanOrEqual(2 * 3_000);
  });

  it("starts empty again after each take", () => {
    const held = createHeldBytes();
    held.add(Uint8Array.of(1), 10);
    held.add(Uint8Array.of(2), 10);
    expect([...held.take()]).toEqual([1, 2]);
    held.add(Uint8Array.of(3), 10);
    expect([...held.take()]).toEqual([3]);
  });
});

describe("an envelope sent a byte at a time", () => {
  it("is held in no more than its declared length, and comes out whole", () => {
    const length = 50_000;
    const body = Uint8Array.from([0, 0, 0, length >> 8, length & 0xff, ...Array.from({ length }, (_, i) => i % 253)]);
    const splitter = createEnvelopeSplitter(length);
    const envelopes = [...body].flatMap((byte) => splitter.push(Uint8Array.of(byte)));
    expect(envelopes).toHaveLength(1);
    expect(envelopes[0]!.data.length).toBe(length);
    expect(envelopes[0]!.data.buffer.byteLength).toBeLessThanOrEqual(length);
    expect([...envelopes[0]!.data]).toEqual([...body.subarray(5)]);
  });
});
