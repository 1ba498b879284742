import { create, type DescMessage, type Message, type MessageInitShape, setExtension } from "@bufbuild/protobuf";
import { WireType } from "@bufbuild/protobuf/wire";
import { FieldOptionsSchema, MessageOptionsSchema, OneofOptionsSchema } from "@bufbuild/protobuf/wkt";
import { createValidator } from "@bufbuild/protovalidate";
import {
  field as fieldRulesOf,
  FieldRulesSchema,
  Ignore,
  message as messageRulesOf,
  MessageRulesSchema,
  oneof as oneofRulesOf,
} from "@bufbuild/protovalidate/gen/buf/validate/validate_pb.js";
import { describe, expect, it } from "vitest";
import { ImportedHumanUserSchema } from "../../gen/gatehouse/admin/v1/user_pb.js";
import { rulesPrecheckOf } from "../../src/interceptors/rules-precheck.js";
import { SERVED_SERVICES } from "../../src/routes.js";
import { field, mapEntry, messageOf, REPEATED, TYPE_INT32, TYPE_MESSAGE, TYPE_STRING } from "../support/descriptors.js";
import { ruleEdgeMessages } from "../support/rule-edges.js";

/**
 * The precheck (src/interceptors/rules-precheck.ts) may clear a request without protovalidate only when protovalidate
 * would find it valid: otherwise a request breaking a rule of its .proto gets through. It must also clear the valid
 * ones, or it buys nothing. Both are stated against protovalidate itself, on messages whose values sit on the edges
 * of every rule (test/support/rule-edges.ts). Prechecks are made once per type and kept, so the synthetic tests build
 * their own types.
 */
const validator = createValidator();
const protovalidateFindsValid = (desc: DescMessage, message: Message) => {
  const result = validator.validate(desc, message);
  if (result.kind === "error") throw result.error;
  return result.kind === "valid";
};

const TYPE_UINT32 = 13;
const TYPE_ENUM = 14;

const fieldRules = (rules: MessageInitShape<typeof FieldRulesSchema>) => {
  const options = create(FieldOptionsSchema);
  setExtension(options, fieldRulesOf, create(FieldRulesSchema, rules));
  return options;
};
const ruled = (shape: ReturnType<typeof field>, rules: MessageInitShape<typeof FieldRulesSchema>) => ({ ...shape, options: fieldRules(rules) });
const requiredOneof = () => {
  const options = create(OneofOptionsSchema);
  setExtension(options, oneofRulesOf, { $typeName: "buf.validate.OneofRules", required: true });
  return options;
};
const celMessage = () => {
  const options = create(MessageOptionsSchema);
  setExtension(options, messageRulesOf, create(MessageRulesSchema, { cel: [{ id: "any", expression: "true" }] }));
  return options;
};
const LEN_1_TO_3 = { type: { case: "string", value: { minLen: 1n, maxLen: 3n } } } as const;
/** Field rules holding a field protovalidate's own schema does not know (a predefined rule's extension). */
const predefined = () => {
  const rules = create(FieldRulesSchema, LEN_1_TO_3);
  rules.$unknown = [{ no: 5000, wireType: WireType.Varint, data: new Uint8Array([1]) }];
  const options = create(FieldOptionsSchema);
  setExtension(options, fieldRulesOf, rules);
  return options;
};

/** Every kind of rule the precheck reads, in every place protobuf-es holds a value differently. */
const readShapes = () =>
  messageOf(
    {
      name: "precheck_read.proto",
      package: "read",
      enumType: [{ name: "Kind", value: [{ name: "KIND_UNSPECIFIED", number: 0 }, { name: "KIND_A", number: 1 }, { name: "KIND_B", number: 4 }] }],
      messageType: [
        { name: "Inner", field: [ruled(field("name", 1, TYPE_STRING), LEN_1_TO_3)] },
        { name: "Free", field: [field("note", 1, TYPE_STRING)] },
        {
          name: "Request",
          field: [
            ruled(field("plain", 1, TYPE_STRING), LEN_1_TO_3),
            { ...ruled(field("maybe", 2, TYPE_STRING), LEN_1_TO_3), proto3Optional: true, oneofIndex: 1 },
            { ...ruled(field("chosen", 3, TYPE_STRING), LEN_1_TO_3), oneofIndex: 0 },
            { ...field("chosen_inner", 4, TYPE_MESSAGE, ".read.Inner"), oneofIndex: 0 },
            ruled(field("count", 5, TYPE_UINT32), { type: { case: "uint32", value: { lessThan: { case: "lte", value: 10 } } } }),
            ruled(field("kind", 6, TYPE_ENUM, ".read.Kind"), { type: { case: "enum", value: { definedOnly: true } } }),
            ruled(field("inner", 7, TYPE_MESSAGE, ".read.Inner"), { required: true }),
            field("optional_inner", 8, TYPE_MESSAGE, ".read.Inner"),
            ruled(field("names", 9, TYPE_STRING, undefined, REPEATED), {
              type: { case: "repeated", value: { minItems: 1n, maxItems: 3n, items: LEN_1_TO_3 } },
            }),
            ruled(field("kinds", 10, TYPE_ENUM, ".read.Kind", REPEATED), {
              type: { case: "repeated", value: { items: { type: { case: "enum", value: { definedOnly: true } } } } },
            }),
            field("inners", 11, TYPE_MESSAGE, ".read.Inner", REPEATED),
            ruled(field("left", 12, TYPE_MESSAGE, ".read.Inner", REPEATED), { type: { case: "repeated", value: { items: { ignore: Ignore.ALWAYS } } } }),
            field("by_name", 13, TYPE_MESSAGE, ".read.Request.ByNameEntry", REPEATED),
            field("title", 14, TYPE_MESSAGE, ".google.protobuf.StringValue"),
            field("number", 15, TYPE_INT32),
            field("labels", 16, TYPE_MESSAGE, ".read.Request.LabelsEntry", REPEATED),
            field("notes", 17, TYPE_MESSAGE, ".read.Request.NotesEntry", REPEATED),
            { ...field("alt_text", 18, TYPE_STRING), oneofIndex: 2 },
            ruled(field("tags", 19, TYPE_STRING, undefined, REPEATED), { type: { case: "repeated", value: { maxItems: 2n } } }),
            ruled(field("any_kind", 20, TYPE_ENUM, ".read.Kind"), { type: { case: "enum", value: {} } }),
            ruled(field("must", 21, TYPE_MESSAGE, ".read.Free"), { required: true }),
          ],
          oneofDecl: [{ name: "choice", options: requiredOneof() }, { name: "_maybe" }, { name: "alt" }],
          nestedType: [
            mapEntry("ByNameEntry", TYPE_STRING, { type: TYPE_MESSAGE, typeName: ".read.Inner" }),
            mapEntry("LabelsEntry", TYPE_STRING, { type: TYPE_STRING }),
            mapEntry("NotesEntry", TYPE_STRING, { type: TYPE_MESSAGE, typeName: ".read.Free" }),
          ],
        },
      ],
    },
    "read.Request",
  );

/** One type per rule the precheck does not read (or shape it leaves to protovalidate), each beside a rule it reads. */
const unreadShapes = () => {
  const plain = ruled(field("plain", 1, TYPE_STRING), LEN_1_TO_3);
  const types: { name: string; field: object[]; options?: object; oneofDecl?: object[]; nestedType?: object[] }[] = [
    { name: "Pattern", field: [plain, ruled(field("code", 2, TYPE_STRING), { type: { case: "string", value: { pattern: "^[a-z]+$" } } })] },
    { name: "Uri", field: [plain, ruled(field("url", 2, TYPE_STRING), { type: { case: "string", value: { wellKnown: { case: "uri", value: true } } } })] },
    { name: "FieldCel", field: [plain, ruled(field("other", 2, TYPE_STRING), { cel: [{ id: "x", expression: "true" }] })] },
    { name: "MessageCel", field: [plain], options: celMessage() },
    { name: "Gte", field: [plain, ruled(field("count", 2, TYPE_UINT32), { type: { case: "uint32", value: { greaterThan: { case: "gte", value: 1 } } } })] },
    { name: "Int32Rules", field: [plain, ruled(field("count", 2, TYPE_INT32), { type: { case: "int32", value: { lessThan: { case: "lte", value: 3 } } } })] },
    { name: "EnumIn", field: [plain, ruled(field("kind", 2, TYPE_ENUM, ".unread.Kind"), { type: { case: "enum", value: { in: [1] } } })] },
    { name: "RequiredText", field: [ruled(field("plain", 1, TYPE_STRING), { required: true })] },
    { name: "RequiredList", field: [plain, ruled(field("names", 2, TYPE_STRING, undefined, REPEATED), { required: true })] },
    { name: "UniqueItems", field: [plain, ruled(field("names", 2, TYPE_STRING, undefined, REPEATED), { type: { case: "repeated", value: { unique: true } } })] },
    {
      name: "ItemPattern",
      field: [plain, ruled(field("names", 2, TYPE_STRING, undefined, REPEATED), { type: { case: "repeated", value: { items: { type: { case: "string", value: { pattern: "a" } } } } } })],
    },
    { name: "ItemRequired", field: [plain, ruled(field("names", 2, TYPE_STRING, undefined, REPEATED), { type: { case: "repeated", value: { items: { required: true } } } })] },
    {
      name: "MessageItemRules",
      field: [plain, ruled(field("items", 2, TYPE_MESSAGE, ".unread.Leaf", REPEATED), { type: { case: "repeated", value: { items: { type: { case: "string", value: { minLen: 1n } } } } } })],
    },
    {
      name: "MapRules",
      field: [plain, ruled(field("labels", 2, TYPE_MESSAGE, ".unread.MapRules.LabelsEntry", REPEATED), { type: { case: "map", value: { maxPairs: 2n } } })],
      nestedType: [mapEntry("LabelsEntry", TYPE_STRING, { type: TYPE_STRING })],
    },
    { name: "MessageFieldRules", field: [plain, ruled(field("when", 2, TYPE_MESSAGE, ".google.protobuf.Timestamp"), { type: { case: "timestamp", value: { lessThan: { case: "ltNow", value: true } } } })] },
    { name: "WrongType", field: [ruled(field("count", 1, TYPE_INT32), LEN_1_TO_3)] },
    { name: "Uint32Lt", field: [plain, ruled(field("count", 2, TYPE_UINT32), { type: { case: "uint32", value: { lessThan: { case: "lt", value: 3 } } } })] },
    { name: "Uint32RulesOnInt32", field: [plain, ruled(field("count", 2, TYPE_INT32), { type: { case: "uint32", value: { lessThan: { case: "lte", value: 3 } } } })] },
    { name: "EnumRulesOnText", field: [plain, ruled(field("kind", 2, TYPE_STRING), { type: { case: "enum", value: { definedOnly: true } } })] },
    { name: "ListWithTextRules", field: [plain, ruled(field("names", 2, TYPE_STRING, undefined, REPEATED), LEN_1_TO_3)] },
    { name: "PredefinedRule", field: [plain, { ...field("code", 2, TYPE_STRING), options: predefined() }] },
    { name: "Recursive", field: [plain, field("next", 2, TYPE_MESSAGE, ".unread.Recursive")] },
    { name: "HoldsUnread", field: [plain, field("inner", 2, TYPE_MESSAGE, ".unread.Pattern")] },
    { name: "Leaf", field: [field("name", 1, TYPE_STRING)] },
  ];
  const file = {
    name: "precheck_unread.proto",
    package: "unread",
    enumType: [{ name: "Kind", value: [{ name: "KIND_UNSPECIFIED", number: 0 }, { name: "KIND_A", number: 1 }] }],
    messageType: types,
  };
  return Object.fromEntries(types.filter((type) => type.name !== "Leaf").map((type) => [type.name, messageOf(file as never, `unread.${type.name}`)]));
};

function agreement(desc: DescMessage, count: number) {
  const precheck = rulesPrecheckOf(desc);
  if (!precheck) throw new Error(`${desc.typeName} has no precheck`);
  const seen = { valid: 0, invalid: 0 };
  const disagreements: string[] = [];
  for (const message of ruleEdgeMessages(desc, count, 1)) {
    const valid = protovalidateFindsValid(desc, message);
    seen[valid ? "valid" : "invalid"]++;
    if (precheck(message) !== valid) disagreements.push(`${desc.typeName}: protovalidate says ${valid ? "valid" : "invalid"}`);
  }
  return { seen, disagreements };
}

describe("the rules precheck", () => {
  it("clears exactly the requests protovalidate finds valid, for every served request type it reads", () => {
    const types = new Set<DescMessage>([ImportedHumanUserSchema]);
    for (const service of SERVED_SERVICES) for (const method of service.methods) types.add(method.input);
    const unread: string[] = [];
    const disagreements: string[] = [];
    for (const desc of types) {
      if (!rulesPrecheckOf(desc)) {
        unread.push(desc.typeName);
        continue;
      }
      disagreements.push(...agreement(desc, 40).disagreements);
    }
    expect(disagreements.slice(0, 5)).toEqual([]);
    // The two types with `uri` rules, the only rule of the .proto files the precheck does not read.
    expect(unread.sort()).toEqual(["gatehouse.admin.v1.CreateIdentityProviderRequest", "gatehouse.admin.v1.CreateSamlApplicationRequest"]);
  });

  it("clears valid users of an import and refuses each kind of bad one, as protovalidate does", () => {
    const { seen, disagreements } = agreement(ImportedHumanUserSchema, 200);
    expect(disagreements).toEqual([]);
    expect(seen.valid).toBeGreaterThan(25);
    expect(seen.invalid).toBeGreaterThan(25);
  });

  it("agrees with protovalidate on every rule it reads, wherever protobuf-es holds the value", () => {
    const desc = readShapes();
    const { seen, disagreements } = agreement(desc, 800);
    expect(disagreements.slice(0, 5)).toEqual([]);
    expect(seen.valid).toBeGreaterThan(25);
  });

  it("clears an optional text and a oneof's other member that are not sent, and a list left to its handler", () => {
    const desc = readShapes();
    const precheck = rulesPrecheckOf(desc)!;
    const init = {
      plain: "abc",
      choice: { case: "chosenInner", value: { name: "x" } },
      count: 10,
      kind: 4,
      inner: { name: "é😀" },
      names: ["a"],
      left: [{ name: "" }, { name: "too long" }],
      must: {},
    };
    const valid = create(desc, init as never);
    expect(protovalidateFindsValid(desc, valid)).toBe(true);
    expect(precheck(valid)).toBe(true);
    for (const [change, value] of [
      ["maybe", ""],
      ["choice", { case: "chosen", value: "" }],
      ["choice", { case: undefined }],
      ["inner", undefined],
      ["must", undefined],
      ["names", []],
      ["names", ["a", "b", "c", "d"]],
      ["kinds", [2]],
      ["inners", [{ name: "" }]],
      ["byName", { k: { name: "abcd" } }],
      ["count", 11],
      ["kind", 2],
      ["plain", "😀😀😀😀"],
    ] as const) {
      const broken = create(desc, { ...init, [change]: value } as never);
      expect({ change, value, protovalidate: protovalidateFindsValid(desc, broken) }).toEqual({ change, value, protovalidate: false });
      expect({ change, value, precheck: precheck(broken) }).toEqual({ change, value, precheck: false });
    }
  });

  it("leaves a type with any rule it does not read to protovalidate", () => {
    const types = unreadShapes();
    expect(Object.entries(types).filter(([, desc]) => rulesPrecheckOf(desc) !== undefined).map(([name]) => name)).toEqual([]);
  });

  it("leaves a proto2 required field to protovalidate", () => {
    const desc = messageOf({ name: "precheck_proto2.proto", package: "p2", syntax: "proto2", messageType: [{ name: "Old", field: [field("id", 1, TYPE_STRING, undefined, 2)] }] }, "p2.Old");
    expect(rulesPrecheckOf(desc)).toBeUndefined();
  });

  it("leaves a type holding one it does not read to protovalidate, whichever of the two is asked for first", () => {
    const holder = unreadShapes().HoldsUnread!;
    const held = holder.fields[1]!.message!;
    expect(rulesPrecheckOf(held)).toBeUndefined();
    expect(rulesPrecheckOf(holder)).toBeUndefined();
  });

  it("clears every message of a type without rules", () => {
    const desc = messageOf({ name: "precheck_none.proto", package: "none", messageType: [{ name: "Free", field: [field("name", 1, TYPE_STRING)] }] }, "none.Free");
    expect(rulesPrecheckOf(desc)?.(create(desc, { name: "" } as never))).toBe(true);
  });
});
