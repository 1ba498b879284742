import { create, createFileRegistry, type DescMessage, isFieldSet, setExtension } from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema, MessageOptionsSchema } from "@bufbuild/protobuf/wkt";
import { file_buf_validate_validate, MessageRulesSchema, message as messageRules } from "@bufbuild/protovalidate/gen/buf/validate/validate_pb.js";
import { createContextValues } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { DomainError } from "../../src/domain/errors.js";
import { createValidationInterceptor, normalizeRequest } from "../../src/interceptors/validation.js";
import { field, mapEntry, messageOf, REPEATED, TYPE_INT32, TYPE_MESSAGE, TYPE_STRING } from "../support/descriptors.js";

/**
 * A violation inside a map names the entry by its key as the caller wrote it (validation.ts: `labels["a"]`, and a
 * number without quotes), whatever the key's type — also for 64-bit integer keys, which protobuf-es hands over as
 * bigint. Every such request must be answered with the violation, never with an internal error.
 */
const TYPE_INT64 = 3;
const TYPE_UINT64 = 4;
const TYPE_SINT64 = 18;
const TYPE_BYTES = 12;

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

/**
 * The names of TRIMMED_FIELD_NAMES lose their surrounding white space where they are a string (API.md "Input"). A
 * field of such a name of another kind — a list or map of strings, a number, bytes, a message — has no white space
 * of its own to lose: the walk passes it, or walks into it, as any field of its kind, and never fails on it.
 */
const OtherKinds = messageOf(
  {
    name: "trimmed_names_of_other_kinds_survivors.proto",
    package: "kinds",
    messageType: [
      { name: "Inner", field: [field("at", 1, TYPE_MESSAGE, ".google.protobuf.Timestamp")] },
      {
        name: "Request",
        field: [
          field("display_name", 1, TYPE_STRING, undefined, REPEATED),
          field("nick_name", 2, TYPE_INT32),
          field("user_name", 3, TYPE_MESSAGE, ".kinds.Request.UserNameEntry", REPEATED),
          field("first_name", 4, TYPE_MESSAGE, ".kinds.Inner"),
          field("last_name", 5, TYPE_BYTES),
        ],
        nestedType: [mapEntry("UserNameEntry", TYPE_STRING, { type: TYPE_STRING })],
      },
    ],
  },
  "kinds.Request",
);

describe("a field of a trimmed name that is not a single string", () => {
  it("is walked as its kind: no failure, a number and bytes unchanged, a message walked into", () => {
    const bytes = new Uint8Array([0x20, 0x41, 0x20]);
    const message = create(OtherKinds, {
      displayName: [" Ada ", "Lovelace"],
      nickName: 7,
      userName: { k: " v " },
      firstName: { at: { seconds: 0n, nanos: -1 } },
      lastName: bytes,
    } as never) as unknown as { nickName: number; lastName: Uint8Array };
    expect(normalizeRequest(OtherKinds, message as never)).toEqual([expect.objectContaining({ field: "first_name.at", rule: "timestamp.range" })]);
    expect(message.nickName).toBe(7);
    expect(message.lastName).toEqual(bytes);
  });

  it.each([
    ["a list of strings", { displayName: [" Ada "] }],
    ["a number", { nickName: 7 }],
    ["a map of strings", { userName: { k: " v " } }],
    ["a message", { firstName: {} }],
    ["bytes", { lastName: new Uint8Array([0x20]) }],
  ])("as %s alone is no violation", (_kind, init) => {
    expect(normalizeRequest(OtherKinds, create(OtherKinds, init as never))).toEqual([]);
  });
});

/**
 * Normalisation changes only what the caller sent: a field it left out stays left out — also one whose declared
 * default (proto2, or editions with explicit presence) carries white space, which trimming it would turn into a
 * value the caller never sent.
 */
describe("a trimmed name the caller left out", () => {
  it("stays unset, though its default has surrounding white space", () => {
    const Request = messageOf(
      {
        name: "left_out_survivors.proto",
        package: "leftout",
        syntax: "proto2",
        messageType: [{ name: "Request", field: [{ ...field("display_name", 1, TYPE_STRING), defaultValue: "  Ada  " }] }],
      },
      "leftout.Request",
    );
    const message = create(Request);
    expect(normalizeRequest(Request, message)).toEqual([]);
    expect(isFieldSet(message, Request.fields[0]!)).toBe(false);
  });
});

/**
 * Every request message is checked before the handler sees it (validation.ts): one whose rules cannot be evaluated
 * (here a CEL rule dividing by a field sent as 0) is not let through unchecked — the call fails with that error,
 * which the error mapping answers as internal, and the handler never runs.
 */
describe("a request whose rules cannot be evaluated", () => {
  const options = create(MessageOptionsSchema);
  setExtension(options, messageRules, create(MessageRulesSchema, { cel: [{ id: "ratio.positive", message: "n / d must be positive", expression: "this.n / this.d > 0" }] }));
  const Ratio = createFileRegistry(
    create(FileDescriptorProtoSchema, {
      name: "ratio_survivors.proto",
      package: "ratio",
      syntax: "proto3",
      dependency: ["buf/validate/validate.proto"],
      messageType: [{ name: "Request", field: [field("n", 1, TYPE_INT32), field("d", 2, TYPE_INT32)], options }],
    }),
    (name) => (name === "buf/validate/validate.proto" ? file_buf_validate_validate : undefined),
  ).getMessage("ratio.Request") as DescMessage;

  async function unary(init: { n: number; d: number }) {
    let handled = 0;
    const call = createValidationInterceptor([])(async (req) => {
      handled += 1;
      return { stream: false, message: req.message } as never;
    });
    const outcome = await call({ stream: false, method: { input: Ratio }, message: create(Ratio, init as never), contextValues: createContextValues() } as never).then(
      () => "handled",
      (error: unknown) => error,
    );
    return { handled, outcome };
  }

  it("never reaches the handler: the call fails with the evaluation error", async () => {
    const { handled, outcome } = await unary({ n: 1, d: 0 });
    expect(handled).toBe(0);
    expect(outcome).toBeInstanceOf(Error);
    expect(outcome).not.toBeInstanceOf(DomainError);
    expect(String(outcome)).toMatch(/divide by zero/);
  });

  it("while one whose rules hold is handled, and one that breaks them is request.invalid", async () => {
    expect(await unary({ n: 1, d: 1 })).toEqual({ handled: 1, outcome: "handled" });
    const { handled, outcome } = await unary({ n: -1, d: 1 });
    expect(handled).toBe(0);
    expect(outcome).toMatchObject({ kind: "invalid_argument", reason: "request.invalid" });
  });
});

describe("a text holding U+0000 (NUL), anywhere in a request", () => {
  it("is a violation naming where: a string field, an item of a list of strings, a map's key and its string value", () => {
    const message = create(OtherKinds, {
      displayName: ["fine", "a\u0000b"],
      userName: { "k\u0000": "v", ok: "x\u0000" },
      firstName: {},
    } as never);
    const violations = normalizeRequest(OtherKinds, message as never);
    expect(violations.map((v) => [v.field, v.rule])).toEqual(
      expect.arrayContaining([
        ["display_name[1]", "string.no_nul"],
        ['user_name["k\\u0000"]', "string.no_nul"],
        ['user_name["ok"]', "string.no_nul"],
      ]),
    );
    expect(violations).toHaveLength(3);
  });

  it("is none for texts without it", () => {
    const message = create(OtherKinds, { displayName: ["a", "b"], userName: { k: "v" } } as never);
    expect(normalizeRequest(OtherKinds, message as never)).toEqual([]);
  });
});
