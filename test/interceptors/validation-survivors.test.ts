import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { normalizeRequest } from "../../src/interceptors/validation.js";
import { field, mapEntry, messageOf, REPEATED, TYPE_MESSAGE } from "../support/descriptors.js";

/**
 * A violation inside a map names the entry by its key as the caller wrote it (validation.ts: `labels["a"]`, and a
 * number without quotes), whatever the key's type — also for 64-bit integer keys, which protobuf-es hands over as
 * bigint. Every such request must be answered with the violation, never with an internal error.
 */
const TYPE_INT64 = 3;
const TYPE_UINT64 = 4;
const TYPE_SINT64 = 18;

const keyedBy = (keyType: number) =>
  messageOf(
    {
      name: `map_keys_${keyType}_survivors.proto`,
      package: `keys${keyType}`,
      messageType: [
        {
          name: "Request",
          field: [field("spans", 1, TYPE_MESSAGE, `.keys${keyType}.Request.SpansEntry`, REPEATED)],
          nestedType: [mapEntry("SpansEntry", keyType, { type: TYPE_MESSAGE, typeName: ".google.protobuf.Duration" })],
        },
      ],
    },
    `keys${keyType}.Request`,
  );

describe("a Duration out of range in a map with 64-bit integer keys", () => {
  it.each([
    ["int64", TYPE_INT64, "-42", "spans[-42]"],
    ["uint64", TYPE_UINT64, "18446744073709551615", "spans[18446744073709551615]"],
    ["sint64", TYPE_SINT64, "7", "spans[7]"],
  ])("(%s) is named by its key as written, without quotes", (_type, keyType, key, path) => {
    const Request = keyedBy(keyType);
    const message = create(Request, { spans: { [key]: { seconds: 1n, nanos: -1 } } } as never);
    expect(normalizeRequest(Request, message)).toEqual([expect.objectContaining({ field: path, rule: "duration.range" })]);
  });
});
