import { describe, expect, it } from "vitest";
import { DomainError } from "../../src/domain/errors.js";
import { createEnvelopeSplitter } from "../../src/transport/envelope-splitter.js";

// The gRPC / gRPC-web / Connect-streaming framing (each message: one byte of flags, four of length, big-endian, then
// the message), as the transport splits a request's body before the rpc reads it: wherever the network cuts the body,
// the same envelopes come out; a message over the limit is refused from its header, a body cut inside an envelope
// when it ends.
const envelope = (flags: number, data: number[]) => Uint8Array.from([flags, 0, 0, 0, data.length, ...data]);
const BODY = Uint8Array.from([...envelope(0, [0x0a, 0x01, 0x78]), ...envelope(1, []), ...envelope(0, [1, 2, 3, 4, 5, 6])]);
const EXPECTED = [
  { flags: 0, data: [0x0a, 0x01, 0x78] },
  { flags: 1, data: [] },
  { flags: 0, data: [1, 2, 3, 4, 5, 6] },
];
const plain = (envelopes: { flags: number; data: Uint8Array }[]) => envelopes.map(({ flags, data }) => ({ flags, data: [...data] }));

function refusal(action: () => void): { code: string; reason: string; message: string } | undefined {
  try {
    action();
  } catch (error) {
    expect(error).toBeInstanceOf(DomainError);
    const { kind, reason, message } = error as DomainError;
    return { code: kind, reason, message };
  }
  return undefined;
}

describe("a body is split into its envelopes wherever it was cut", () => {
  it("in one piece", () => {
    const splitter = createEnvelopeSplitter(100);
    expect(plain(splitter.push(BODY))).toEqual(EXPECTED);
    expect(refusal(() => splitter.end())).toBeUndefined();
  });

  it("cut at every byte into two pieces, and byte by byte", () => {
    for (let cut = 0; cut <= BODY.length; cut++) {
      const splitter = createEnvelopeSplitter(100);
      expect(plain([...splitter.push(BODY.subarray(0, cut)), ...splitter.push(BODY.subarray(cut))]), `cut at ${cut}`).toEqual(EXPECTED);
    }
    const splitter = createEnvelopeSplitter(100);
    expect(plain([...BODY].flatMap((byte) => splitter.push(Uint8Array.of(byte))))).toEqual(EXPECTED);
  });

  it("an envelope is handed out only once all its bytes are there", () => {
    const splitter = createEnvelopeSplitter(100);
    expect(splitter.push(BODY.subarray(0, 3))).toEqual([]);
    expect(splitter.push(BODY.subarray(3, 7))).toEqual([]);
    expect(plain(splitter.push(BODY.subarray(7, 8)))).toEqual(EXPECTED.slice(0, 1));
  });
});

describe("a body that ends inside an envelope: invalid_argument request.malformed", () => {
  const INCOMPLETE = { code: "invalid_argument", reason: "request.malformed", message: "the request ends inside a message envelope" };

  it("inside a header, inside a message, or right after a header that announced one", () => {
    for (const cut of [1, 4, 5, 7]) {
      const splitter = createEnvelopeSplitter(100);
      splitter.push(BODY.subarray(0, cut));
      expect(refusal(() => splitter.end()), `cut at ${cut}`).toEqual(INCOMPLETE);
    }
  });

  it("a body of whole envelopes, or no body at all, ends well", () => {
    expect(refusal(() => createEnvelopeSplitter(100).end())).toBeUndefined();
    const splitter = createEnvelopeSplitter(100);
    splitter.push(BODY.subarray(0, 8));
    expect(refusal(() => splitter.end())).toBeUndefined();
  });
});

describe("a message longer than the limit is refused from its header: resource_exhausted request.too_large", () => {
  it("over the limit by one byte, before any of its data arrived", () => {
    expect(refusal(() => createEnvelopeSplitter(5).push(Uint8Array.from([0, 0, 0, 0, 6])))).toEqual({
      code: "resource_exhausted",
      reason: "request.too_large",
      message: "request message of 6 bytes is larger than 5 bytes",
    });
  });

  it("exactly the limit is taken; lengths are four bytes, big-endian", () => {
    expect(plain(createEnvelopeSplitter(5).push(Uint8Array.from([0, 0, 0, 0, 5, 1, 2, 3, 4, 5])))).toEqual([{ flags: 0, data: [1, 2, 3, 4, 5] }]);
    expect(refusal(() => createEnvelopeSplitter(255).push(Uint8Array.from([0, 0, 0, 1, 0])))?.message).toBe("request message of 256 bytes is larger than 255 bytes");
    expect(plain(createEnvelopeSplitter(256).push(Uint8Array.from([7, 0, 0, 1, 0, ...new Array<number>(256).fill(9)])))).toEqual([{ flags: 7, data: new Array<number>(256).fill(9) }]);
  });
});
