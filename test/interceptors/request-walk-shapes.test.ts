import { create, type DescMessage } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { ImportedHumanUserSchema } from "../../gen/gatehouse/admin/v1/user_pb.js";
import { normalizeRequest, prepareRequestWalk } from "../../src/interceptors/validation.js";
import { SERVED_SERVICES } from "../../src/routes.js";
import { field, messageOf, REPEATED, TYPE_INT32, TYPE_MESSAGE, TYPE_STRING } from "../support/descriptors.js";

/**
 * The request walk reads a decoded message's fields as protobuf-es holds them (src/interceptors/validation.ts), so
 * the shapes it holds differently from the .proto must be walked as the .proto means them: a oneof's member inside
 * its group, a singular google.protobuf.StringValue as its string, and a Struct not at all (refused when its type's
 * walk is made, so no request of such a type can slip past the checks).
 */
const Shapes = messageOf(
  {
    name: "request_walk_shapes.proto",
    package: "shapes",
    messageType: [
      { name: "Inner", field: [field("nick_name", 1, TYPE_STRING), field("count", 2, TYPE_INT32)] },
      {
        name: "Request",
        field: [
          { ...field("user_name", 1, TYPE_STRING), oneofIndex: 0 },
          { ...field("inner", 2, TYPE_MESSAGE, ".shapes.Inner"), oneofIndex: 0 },
          field("title", 3, TYPE_MESSAGE, ".google.protobuf.StringValue"),
          field("size", 4, TYPE_MESSAGE, ".google.protobuf.Int32Value"),
          field("titles", 5, TYPE_MESSAGE, ".google.protobuf.StringValue", REPEATED),
          { ...field("other_title", 6, TYPE_MESSAGE, ".google.protobuf.StringValue"), oneofIndex: 0 },
          { ...field("data", 7, TYPE_MESSAGE, ".google.protobuf.Struct"), oneofIndex: 0 },
        ],
        oneofDecl: [{ name: "choice" }],
      },
      { name: "WithStruct", field: [field("inner", 1, TYPE_MESSAGE, ".shapes.Inner"), field("extra", 2, TYPE_MESSAGE, ".google.protobuf.Struct")] },
      { name: "Holder", field: [field("with_struct", 1, TYPE_MESSAGE, ".shapes.WithStruct")] },
    ],
  },
  "shapes.Request",
);
const typeOf = (name: string) => Shapes.file.messages.find((message) => message.name === name) as DescMessage;

type Walked = { choice: { case: string | undefined; value?: unknown }; title?: string; size?: number; titles: { value: string }[] };
const walk = (init: object) => {
  const message = create(Shapes, init as never) as unknown as Walked;
  return { violations: normalizeRequest(Shapes, message as never), message };
};

describe("a oneof member", () => {
  it("is trimmed in its group when it is a trimmed name, and its NUL named by its own path", () => {
    const { violations, message } = walk({ choice: { case: "userName", value: "  ada\u0000 " } });
    expect(message.choice).toEqual({ case: "userName", value: "ada\u0000" });
    expect(violations).toEqual([expect.objectContaining({ field: "user_name", rule: "string.no_nul" })]);
  });

  it("that is a message is walked into", () => {
    const { violations, message } = walk({ choice: { case: "inner", value: { nickName: " nick ", count: 3 } } });
    expect(message.choice.value).toMatchObject({ nickName: "nick", count: 3 });
    expect(violations).toEqual([]);
  });

  it("that is a StringValue is a message there, its text checked at .value", () => {
    const { violations } = walk({ choice: { case: "otherTitle", value: { value: "a\u0000" } } });
    expect(violations).toEqual([expect.objectContaining({ field: "other_title.value", rule: "string.no_nul" })]);
  });

  it("that is a Struct is a message there, walked down to its texts", () => {
    const data = { fields: { "k\u0000": { kind: { case: "structValue", value: { fields: { j: { kind: { case: "stringValue", value: "\u0000" } } } } } } } };
    const { violations } = walk({ choice: { case: "data", value: data } });
    expect(violations.map((v) => v.field).sort()).toEqual(['data.fields["k\\u0000"]', 'data.fields["k\\u0000"].struct_value.fields["j"].string_value']);
  });

  it("not chosen is not looked at", () => {
    expect(walk({ title: "plain" }).violations).toEqual([]);
  });
});

describe("google.protobuf.StringValue, held as its string", () => {
  it("has its NUL named at <field>.value, and is not trimmed", () => {
    const { violations, message } = walk({ title: " t\u0000 " });
    expect(message.title).toBe(" t\u0000 ");
    expect(violations).toEqual([expect.objectContaining({ field: "title.value", rule: "string.no_nul" })]);
  });

  it("in a list is a message, each checked at its index", () => {
    const { violations } = walk({ titles: [{ value: "ok" }, { value: "\u0000" }] });
    expect(violations).toEqual([expect.objectContaining({ field: "titles[1].value", rule: "string.no_nul" })]);
  });

  it("of another kind (a number) has nothing to check", () => {
    expect(walk({ size: 7 }).violations).toEqual([]);
  });
});

describe("the walk of a request type", () => {
  it("can be made for every request of every served service, and for a bulk import's user", () => {
    const requests = [...SERVED_SERVICES.flatMap((service) => service.methods.map((method) => method.input)), ImportedHumanUserSchema];
    for (const desc of requests) expect(() => prepareRequestWalk(desc), desc.typeName).not.toThrow();
  });

  it("is refused for a type holding a google.protobuf.Struct, naming the field, however deep", () => {
    expect(() => prepareRequestWalk(typeOf("Holder"))).toThrow(/shapes\.WithStruct\.extra: a google\.protobuf\.Struct/);
  });
});
