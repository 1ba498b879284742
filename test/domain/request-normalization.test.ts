import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { normalizeRequest } from "../../src/interceptors/validation.js";
import { field, mapEntry, messageOf, REPEATED, TYPE_INT32, TYPE_MESSAGE, TYPE_STRING } from "../support/descriptors.js";

/**
 * The request walk of the validation interceptor, on a message shape no Gatehouse RPC has yet
 * (Timestamps and Durations in nested, repeated and map fields), so a later RPC that adds one is
 * covered already. The shapes over real protocols are in test/api/timestamp-range and trim-names.
 */
const Outer = messageOf(
  {
    name: "normalization_test.proto",
    package: "test",
    messageType: [
      { name: "Inner", field: [field("at", 1, TYPE_MESSAGE, ".google.protobuf.Timestamp"), field("display_name", 2, TYPE_STRING)] },
      {
        name: "Outer",
        field: [
          field("at", 1, TYPE_MESSAGE, ".google.protobuf.Timestamp"),
          field("span", 2, TYPE_MESSAGE, ".google.protobuf.Duration"),
          field("items", 3, TYPE_MESSAGE, ".test.Inner", REPEATED),
          field("by_key", 4, TYPE_MESSAGE, ".test.Outer.ByKeyEntry", REPEATED),
          field("times", 5, TYPE_MESSAGE, ".google.protobuf.Timestamp", REPEATED),
          field("spans", 6, TYPE_MESSAGE, ".test.Outer.SpansEntry", REPEATED),
          field("user_name", 7, TYPE_STRING),
          field("description", 8, TYPE_STRING),
        ],
        nestedType: [
          mapEntry("ByKeyEntry", TYPE_STRING, { type: TYPE_MESSAGE, typeName: ".test.Inner" }),
          mapEntry("SpansEntry", TYPE_INT32, { type: TYPE_MESSAGE, typeName: ".google.protobuf.Duration" }),
        ],
      },
    ],
  },
  "test.Outer",
);

const ok = { seconds: 1_700_000_000n, nanos: 5 };
const far = { seconds: 10n ** 15n, nanos: 0 };

describe("normalizeRequest", () => {
  it("accepts Timestamps and Durations at the edges of their ranges", () => {
    const message = create(Outer, {
      at: { seconds: 253_402_300_799n, nanos: 999_999_999 },
      span: { seconds: -315_576_000_000n, nanos: -999_999_999 },
      times: [{ seconds: -62_135_596_800n, nanos: 0 }],
      spans: { 1: { seconds: 315_576_000_000n, nanos: 999_999_999 } },
    } as never);
    expect(normalizeRequest(Outer, message)).toEqual([]);
  });

  it("names every out-of-range Timestamp and Duration by its path, nested, repeated and in maps", () => {
    const message = create(Outer, {
      at: { seconds: 0n, nanos: 1_000_000_000 },
      span: { seconds: 1n, nanos: -1 },
      items: [{ at: ok }, { at: far }],
      byKey: { ok: { at: ok }, "b\"ad": { at: { seconds: -62_135_596_801n, nanos: 0 } } },
      times: [ok, ok, { seconds: 0n, nanos: -1 }],
      spans: { 7: { seconds: 315_576_000_001n, nanos: 0 } },
    } as never);
    const violations = normalizeRequest(Outer, message);
    expect(violations.map((v) => `${v.field} ${v.rule}`).sort()).toEqual(
      [
        "at timestamp.range",
        "span duration.range",
        "items[1].at timestamp.range",
        'by_key["b\\"ad"].at timestamp.range',
        "times[2] timestamp.range",
        "spans[7] duration.range",
      ].sort(),
    );
  });

  it("trims the named fields wherever they are and leaves every other string alone", () => {
    const message = create(Outer, {
      userName: "  ada\t",
      description: "  kept  ",
      items: [{ displayName: " Ada L. " }],
      byKey: { k: { displayName: "\u3000 wide \u3000" } },
    } as never) as unknown as { userName: string; description: string; items: { displayName: string }[]; byKey: Record<string, { displayName: string }> };
    expect(normalizeRequest(Outer, message as never)).toEqual([]);
    expect(message).toMatchObject({ userName: "ada", description: "  kept  ", items: [{ displayName: "Ada L." }], byKey: { k: { displayName: "wide" } } });
  });
});
