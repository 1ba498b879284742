import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { GetUserRequestSchema } from "../../gen/gatehouse/admin/v1/user_pb.js";
import { BINARY_READ } from "../../src/transport/decode-check.js";

// Unknown fields of a binary request are skipped, not kept (decode-check.ts BINARY_READ, also connect-es's reading
// options): nothing reads them, and keeping tiny ones cost seconds for 4 MiB (15 bytes of brotli) before any caller
// was known.
describe("binary requests are read without their unknown fields", () => {
  it("a message with thousands of unknown fields decodes to its known fields alone", () => {
    const known = toBinary(GetUserRequestSchema, create(GetUserRequestSchema, { userId: "u1" }));
    // Field 2 is unknown to GetUserRequest: tag 0x10 (field 2, varint), value 0, ten thousand times.
    const unknown = Buffer.alloc(20_000, Buffer.from([0x10, 0x00]));
    const message = fromBinary(GetUserRequestSchema, Buffer.concat([known, unknown]), BINARY_READ);
    expect(message.userId).toBe("u1");
    expect((message as { $unknown?: unknown[] }).$unknown).toBeUndefined();
    // protobuf-es's default keeps them, field by field: the option is what drops them.
    expect((fromBinary(GetUserRequestSchema, Buffer.concat([known, unknown])) as { $unknown?: unknown[] }).$unknown).toHaveLength(10_000);
  });
});
