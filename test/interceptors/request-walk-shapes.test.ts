import { create, createFileRegistry, type DescFile, type DescMessage } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { ImportHumanUsersRequestSchema, ImportedHumanUserSchema } from "../../gen/gatehouse/admin/v1/user_pb.js";
import { createValidationInterceptor, normalizeRequest, prepareRequestWalk } from "../../src/interceptors/validation.js";
import { SERVED_SERVICES } from "../../src/routes.js";
import { field, mapEntry, messageOf, REPEATED, TYPE_INT32, TYPE_MESSAGE, TYPE_STRING } from "../support/descriptors.js";

/**
 * The request walk reads a decoded message's fields as protobuf-es holds them (src/interceptors/validation.ts), so
 * the shapes it holds differently from the .proto must be walked as the .proto means them: a oneof's member inside
 * its group, a singular wrapper (StringValue…) as its plain value; and a Struct, which protobuf-es holds as a JSON
 * object, not at all: its type is refused when the server starts.
 *
 * The walk's steps are made once per message type and kept, so every test here builds its own types (`shapes()`):
 * a step is then made, and checked, by the test that uses it.
 */
const shapes = () =>
  messageOf(
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
            field("tags", 7, TYPE_STRING, undefined, REPEATED),
            field("counts", 8, TYPE_INT32, undefined, REPEATED),
            field("items", 9, TYPE_MESSAGE, ".shapes.Inner", REPEATED),
            field("labels", 10, TYPE_MESSAGE, ".shapes.Request.LabelsEntry", REPEATED),
            field("by_number", 11, TYPE_MESSAGE, ".shapes.Request.ByNumberEntry", REPEATED),
            field("sizes", 12, TYPE_MESSAGE, ".shapes.Request.SizesEntry", REPEATED),
            field("value", 13, TYPE_MESSAGE, ".google.protobuf.Value"),
            field("next", 14, TYPE_MESSAGE, ".shapes.Request"),
          ],
          oneofDecl: [{ name: "choice" }],
          nestedType: [
            mapEntry("LabelsEntry", TYPE_STRING, { type: TYPE_STRING }),
            mapEntry("ByNumberEntry", TYPE_INT32, { type: TYPE_MESSAGE, typeName: ".shapes.Inner" }),
            mapEntry("SizesEntry", TYPE_STRING, { type: TYPE_INT32 }),
          ],
        },
        { name: "Single", field: [field("inner", 1, TYPE_MESSAGE, ".shapes.Inner"), field("extra", 2, TYPE_MESSAGE, ".google.protobuf.Struct")] },
        { name: "InOneof", field: [{ ...field("extra", 1, TYPE_MESSAGE, ".google.protobuf.Struct"), oneofIndex: 0 }], oneofDecl: [{ name: "choice" }] },
        { name: "InList", field: [field("extras", 1, TYPE_MESSAGE, ".google.protobuf.Struct", REPEATED)] },
        {
          name: "InMap",
          field: [field("extras", 1, TYPE_MESSAGE, ".shapes.InMap.ExtrasEntry", REPEATED)],
          nestedType: [mapEntry("ExtrasEntry", TYPE_STRING, { type: TYPE_MESSAGE, typeName: ".google.protobuf.Struct" })],
        },
        { name: "Holder", field: [field("single", 1, TYPE_MESSAGE, ".shapes.Single")] },
      ],
      service: [{ name: "Shapes", method: [{ name: "Call", inputType: ".shapes.Holder", outputType: ".shapes.Inner" }] }],
    },
    "shapes.Request",
  );
const typeOf = (name: string) => shapes().file.messages.find((message) => message.name === name) as DescMessage;

type Walked = { choice: { case: string | undefined; value?: unknown }; title?: string; labels: Record<string, string> };
const walk = (init: object) => {
  const Request = shapes();
  const message = create(Request, init as never) as unknown as Walked;
  return { violations: normalizeRequest(Request, message as never), message };
};
const nul = (field: string) => expect.objectContaining({ field, rule: "string.no_nul" });

/** A type of Gatehouse's own .proto as new descriptors (the same file, read again): its steps are not made yet. */
function freshCopy(desc: DescMessage): DescMessage {
  const dependencies = new Map<string, DescFile>();
  const collect = (file: DescFile) => {
    for (const dependency of file.dependencies) {
      dependencies.set(dependency.proto.name, dependency);
      collect(dependency);
    }
  };
  collect(desc.file);
  return createFileRegistry(desc.file.proto, (name) => dependencies.get(name)).getMessage(desc.typeName) as DescMessage;
}

describe("a oneof member", () => {
  it("is trimmed in its group when it is a trimmed name, and its NUL named by its own path", () => {
    const { violations, message } = walk({ choice: { case: "userName", value: "  ada\u0000 " } });
    expect(message.choice).toEqual({ case: "userName", value: "ada\u0000" });
    expect(violations).toEqual([nul("user_name")]);
  });

  it("that is a message is walked into", () => {
    const { violations, message } = walk({ choice: { case: "inner", value: { nickName: " nick\u0000 ", count: 3 } } });
    expect(message.choice.value).toMatchObject({ nickName: "nick\u0000", count: 3 });
    expect(violations).toEqual([nul("inner.nick_name")]);
  });

  it("that is a StringValue is a message there, its text checked at .value", () => {
    expect(walk({ choice: { case: "otherTitle", value: { value: "a\u0000" } } }).violations).toEqual([nul("other_title.value")]);
  });
});

describe("google.protobuf.StringValue, held as its string", () => {
  it("has its NUL named at <field>.value, and is not trimmed", () => {
    const { violations, message } = walk({ title: " t\u0000 " });
    expect(message.title).toBe(" t\u0000 ");
    expect(violations).toEqual([nul("title.value")]);
  });

  it("is named after the texts of its own message, as the message it stands for would be", () => {
    expect(walk({ title: "\u0000", tags: ["\u0000"] }).violations).toEqual([nul("tags[0]"), nul("title.value")]);
  });

  it("in a list is a message, each checked at its index", () => {
    expect(walk({ titles: [{ value: "ok" }, { value: "\u0000" }] }).violations).toEqual([nul("titles[1].value")]);
  });

  it("of another kind (a number) has nothing to check", () => {
    expect(walk({ size: 7 }).violations).toEqual([]);
  });
});

describe("lists", () => {
  it("of texts: each item checked at its index, none trimmed", () => {
    const { violations } = walk({ tags: [" a ", "b\u0000"] });
    expect(violations).toEqual([nul("tags[1]")]);
  });

  it("of numbers are walked past", () => {
    expect(walk({ counts: [1, 2] }).violations).toEqual([]);
  });

  it("of messages: each item walked into, named by its index", () => {
    expect(walk({ items: [{ nickName: "ok" }, { nickName: "x\u0000" }] }).violations).toEqual([nul("items[1].nick_name")]);
  });

  it("whose items the .proto leaves to the handler are not walked (a bulk import's bad user is its own result)", () => {
    const Request = freshCopy(ImportHumanUsersRequestSchema);
    const message = create(Request, { users: [{ user: { userName: "a\u0000" } }] } as never);
    expect(normalizeRequest(Request, message)).toEqual([]);
  });
});

describe("maps", () => {
  it("of texts by text: keys and values checked, named by the quoted key", () => {
    const { violations, message } = walk({ labels: { "k\u0000": "v", ok: " w\u0000 " } });
    expect(violations.map((v) => v.field).sort()).toEqual(['labels["k\\u0000"]', 'labels["ok"]']);
    expect(message.labels).toEqual({ "k\u0000": "v", ok: " w\u0000 " });
  });

  it("of messages by number: each value walked into, named by the bare key", () => {
    expect(walk({ byNumber: { 7: { nickName: "\u0000" } } }).violations).toEqual([nul("by_number[7].nick_name")]);
  });

  it("of numbers by text: only the keys are checked", () => {
    expect(walk({ sizes: { a: 1, "b\u0000": 2 } }).violations).toEqual([nul('sizes["b\\u0000"]')]);
  });
});

describe("the walk of a request type", () => {
  it("is made for every request of every served service, and for a bulk import's user, when the server starts", () => {
    expect(() => createValidationInterceptor(SERVED_SERVICES)).not.toThrow();
    expect(() => prepareRequestWalk(ImportedHumanUserSchema)).not.toThrow();
  });

  it("goes into google.protobuf.Value (which holds a Struct as a message) and ends on a recursive type", () => {
    expect(() => prepareRequestWalk(shapes())).not.toThrow();
  });

  it.each(["Single", "InOneof", "InList", "InMap"])("is refused for a Struct held as JSON (%s), naming the field", (name) => {
    expect(() => prepareRequestWalk(typeOf(name))).toThrow(new RegExp(`^shapes\\.${name}(\\.ExtrasEntry\\.value|\\.extras?): a google\\.protobuf\\.Struct`));
  });

  it("refused stops the server's start: the interceptor is not made", () => {
    const service = typeOf("Holder").file.services[0]!;
    expect(() => createValidationInterceptor([service])).toThrow(/shapes\.Single\.extra: a google\.protobuf\.Struct/);
  });
});
