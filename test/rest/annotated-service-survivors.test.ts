import { create, createFileRegistry, type DescMessage, type DescService, type Message, setExtension, toJson } from "@bufbuild/protobuf";
import {
  FieldDescriptorProto_Label as Label,
  FieldDescriptorProto_Type as Type,
  type FileDescriptorProto,
  FieldOptionsSchema,
  FileDescriptorProtoSchema,
  MessageOptionsSchema,
  MethodOptionsSchema,
} from "@bufbuild/protobuf/wkt";
import { field as fieldRules, FieldRulesSchema } from "@bufbuild/protovalidate/gen/buf/validate/validate_pb.js";
import { ConnectError, type HandlerContext } from "@connectrpc/connect";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { http as httpRule } from "../../gen/google/api/annotations_pb.js";
import { HttpRuleSchema } from "../../gen/google/api/http_pb.js";
import { fromDomainError } from "../../src/interceptors/error-mapping.js";
import { createRestGateway } from "../../src/rest/gateway.js";
import { buildOpenApi } from "../../src/rest/openapi.js";
import { eventually } from "../support/eventually.js";

// The REST transcoding and the OpenAPI generator follow google.api.http and proto3 JSON for every annotated RPC,
// not only for the field kinds the six SPEC operations happen to use. This file builds a small annotated service
// in memory (a GET route without body, a PUT route with body "*") with the field kinds the Gatehouse protos lack:
// double/float (JSON numbers), bytes (base64 strings), 32-bit integers (JSON integers, uint32/fixed32 unsigned),
// a uint32 with a `lte` rule (maximum), maps of messages and of strings, and a repeated field.

function withHttp(pattern: { case: "get" | "put"; value: string } | { case: "custom"; value: { kind: string; path: string } }, body = "") {
  const options = create(MethodOptionsSchema);
  setExtension(options, httpRule, create(HttpRuleSchema, { pattern, body }));
  return options;
}

function withRules(rules: Parameters<typeof create<typeof FieldRulesSchema>>[1]) {
  const options = create(FieldOptionsSchema);
  setExtension(options, fieldRules, create(FieldRulesSchema, rules));
  return options;
}
const withStringMax = (maxLen: number) => withRules({ type: { case: "string", value: { maxLen: BigInt(maxLen) } } });

function withUint32Below(lessThan: { case: "lte" | "lt"; value: number }) {
  const options = create(FieldOptionsSchema);
  setExtension(options, fieldRules, create(FieldRulesSchema, { type: { case: "uint32", value: { lessThan } } }));
  return options;
}

const jsonName = (name: string) => name.replace(/_([a-z])/g, (_m, c: string) => c.toUpperCase());
const field = (name: string, number: number, type: Type, extra: Record<string, unknown> = {}) => ({ name, number, type, label: Label.OPTIONAL, jsonName: jsonName(name), ...extra });
const mapEntry = (name: string, value: Record<string, unknown>) => ({
  name,
  options: create(MessageOptionsSchema, { mapEntry: true }),
  field: [field("key", 1, Type.STRING), { ...field("value", 2, Type.STRING), ...value }],
});

function thingsFile(withComments: boolean): FileDescriptorProto {
  return create(FileDescriptorProtoSchema, {
    name: "gatehouse/test/v1/things.proto",
    package: "gatehouse.test.v1",
    syntax: "proto3",
    messageType: [
      { name: "Part", field: [field("name", 1, Type.STRING)] },
      {
        name: "ThingRequest",
        field: [
          field("thing_id", 1, Type.STRING),
          field("ratio", 2, Type.DOUBLE),
          field("share", 3, Type.FLOAT),
          field("blob", 4, Type.BYTES),
          field("count", 5, Type.INT32),
          field("limit", 6, Type.UINT32, { options: withUint32Below({ case: "lte", value: 500 }) }),
          field("mask", 7, Type.FIXED32),
          field("delta", 8, Type.SINT32),
          field("parts", 9, Type.MESSAGE, { label: Label.REPEATED, typeName: ".gatehouse.test.v1.ThingRequest.PartsEntry" }),
          field("labels", 10, Type.MESSAGE, { label: Label.REPEATED, typeName: ".gatehouse.test.v1.ThingRequest.LabelsEntry" }),
          field("tags", 11, Type.STRING, { label: Label.REPEATED }),
          field("max_items", 12, Type.INT32),
          field("extra_tags", 13, Type.STRING, { label: Label.REPEATED }),
          field("below", 14, Type.UINT32, { options: withUint32Below({ case: "lt", value: 500 }) }),
          field("note", 15, Type.STRING, { options: withStringMax(10) }),
          field("total", 16, Type.INT64),
          field("window", 17, Type.MESSAGE, { typeName: ".gatehouse.test.v1.ThingRequest.Window" }),
          field("mood", 18, Type.ENUM, { typeName: ".gatehouse.test.v1.ThingRequest.Mood" }),
          field("colour", 19, Type.ENUM, { typeName: ".gatehouse.test.v1.Colour" }),
          field("tree", 20, Type.MESSAGE, { typeName: ".gatehouse.test.v1.Tree" }),
          field("code", 21, Type.STRING, { options: withRules({ type: { case: "string", value: { minLen: 2n } } }) }),
          field("aliases", 22, Type.STRING, {
            label: Label.REPEATED,
            options: withRules({ type: { case: "repeated", value: { minItems: 1n, maxItems: 5n, items: { type: { case: "string", value: { minLen: 1n, maxLen: 20n } } } } } }),
          }),
          field("keys", 23, Type.STRING, { label: Label.REPEATED, options: withRules({ type: { case: "repeated", value: { minItems: 2n } } }) }),
          field("pieces", 24, Type.MESSAGE, {
            label: Label.REPEATED,
            typeName: ".gatehouse.test.v1.Part",
            options: withRules({ type: { case: "repeated", value: { maxItems: 3n, items: { type: { case: "string", value: { maxLen: 9n } } } } } }),
          }),
          field("owner", 25, Type.STRING, { options: withRules({ required: true }) }),
          field("plain_list", 26, Type.STRING, { label: Label.REPEATED, options: withRules({ type: { case: "repeated", value: { maxItems: 4n, items: { type: { case: "string", value: { minLen: 3n } } } } } }) }),
        ],
        nestedType: [
          mapEntry("PartsEntry", { type: Type.MESSAGE, typeName: ".gatehouse.test.v1.Part" }),
          mapEntry("LabelsEntry", {}),
          { name: "Window", field: [field("from", 1, Type.STRING)] },
        ],
        enumType: [{ name: "Mood", value: [{ name: "MOOD_UNSPECIFIED", number: 0 }, { name: "MOOD_GOOD", number: 1 }] }],
      },
      // A message that contains itself.
      { name: "Tree", field: [field("children", 1, Type.MESSAGE, { label: Label.REPEATED, typeName: ".gatehouse.test.v1.Tree" })] },
      { name: "ThingResponse", field: [field("echo", 1, Type.STRING)] },
    ],
    enumType: [{ name: "Colour", value: [{ name: "COLOUR_UNSPECIFIED", number: 0 }, { name: "COLOUR_RED", number: 1 }] }],
    service: [
      {
        name: "ThingService",
        method: [
          { name: "GetThing", inputType: ".gatehouse.test.v1.ThingRequest", outputType: ".gatehouse.test.v1.ThingResponse", options: withHttp({ case: "get", value: "/v1/things/{thing_id}" }) },
          // No annotation: RPC-only.
          { name: "CountThings", inputType: ".gatehouse.test.v1.ThingRequest", outputType: ".gatehouse.test.v1.ThingResponse" },
          // A custom HTTP method is no REST route: the RPC stays RPC-only.
          { name: "PokeThing", inputType: ".gatehouse.test.v1.ThingRequest", outputType: ".gatehouse.test.v1.ThingResponse", options: withHttp({ case: "custom", value: { kind: "POKE", path: "/v1/pokes/{thing_id}" } }) },
          { name: "UpdateThing", inputType: ".gatehouse.test.v1.ThingRequest", outputType: ".gatehouse.test.v1.ThingResponse", options: withHttp({ case: "put", value: "/v1/things/{thing_id}" }, "*") },
        ],
      },
    ],
    ...(withComments
      ? {
          sourceCodeInfo: {
            location: [
              { path: [4, 1], span: [0, 0, 0], leadingComments: " A thing to ask for.\n" },
              // The field `ratio` has a location but no comment.
              { path: [4, 1, 2, 1], span: [0, 0, 0] },
              { path: [4, 1, 2, 2], span: [0, 0, 0], leadingComments: " The share.\n" },
              { path: [4, 1, 3, 2], span: [0, 0, 0], leadingComments: " A window of time.\n" },
              { path: [4, 1, 4, 0], span: [0, 0, 0], leadingComments: " How the thing feels.\n" },
              { path: [5, 0], span: [0, 0, 0], leadingComments: " A colour.\n" },
              { path: [6, 0], span: [0, 0, 0], leadingComments: " The things.\n" },
            ],
          },
        }
      : {}),
  });
}

/** A file outside gatehouse/ (as the vendored google/ protos are), with an annotated RPC of its own. */
const vendorFile = create(FileDescriptorProtoSchema, {
  name: "vendor/other/v1/other.proto",
  package: "vendor.other.v1",
  syntax: "proto3",
  messageType: [{ name: "Empty", field: [] }],
  service: [{ name: "OtherService", method: [{ name: "Other", inputType: ".vendor.other.v1.Empty", outputType: ".vendor.other.v1.Empty", options: withHttp({ case: "get", value: "/v1/other" }) }] }],
});

const registry = createFileRegistry(createFileRegistry(thingsFile(false), () => undefined), createFileRegistry(vendorFile, () => undefined));
const service = registry.getService("gatehouse.test.v1.ThingService") as DescService;
const requestSchema = registry.getMessage("gatehouse.test.v1.ThingRequest") as DescMessage;

type Schema = Record<string, unknown> & { properties: Record<string, Record<string, unknown>> };
interface Document {
  paths: Record<string, Record<string, { description: string; requestBody?: { content: { "application/json": { schema: Schema } } } }>>;
  components: { schemas: Record<string, Schema> };
}

describe("OpenAPI schemas of proto3 JSON field kinds", () => {
  // Built inside each test, not once for the file: mutation testing attributes only code that runs inside a test (a
  // document built while the file is collected is no test's, and a mutant of the generator would survive every one).
  const built = () => {
    const document = buildOpenApi([thingsFile(true)], registry, "0.0.0") as unknown as Document;
    const put = document.paths["/v1/things/{thing_id}"]!.put!;
    return { document, put, properties: put.requestBody!.content["application/json"].schema.properties };
  };

  it("double and float are JSON numbers; bytes a base64 string", () => {
    const { properties } = built();
    expect(properties.ratio).toEqual({ type: "number" });
    expect(properties.share).toMatchObject({ type: "number" });
    expect(properties.blob).toEqual({ type: "string", contentEncoding: "base64" });
  });

  it("32-bit integers are JSON integers, unsigned ones uint32, a `lte` rule their maximum", () => {
    const { properties } = built();
    expect(properties.count).toEqual({ type: "integer", format: "int32" });
    expect(properties.delta).toEqual({ type: "integer", format: "int32" });
    expect(properties.mask).toEqual({ type: "integer", format: "uint32" });
    expect(properties.limit).toEqual({ type: "integer", format: "uint32", maximum: 500 });
    // `lt: 500` refuses 500: the document must not allow it.
    expect(properties.below).toMatchObject({ type: "integer", format: "uint32" });
    const maximum = properties.below!.maximum as number | undefined;
    expect(maximum === undefined || maximum < 500, `maximum ${maximum} allows what lt 500 refuses`).toBe(true);
  });

  it("a map of messages is an object whose values are the message; a map of strings one of strings", () => {
    const { document, properties } = built();
    expect(properties.parts).toEqual({ type: "object", additionalProperties: { $ref: "#/components/schemas/gatehouse.test.v1.Part" } });
    expect(document.components.schemas["gatehouse.test.v1.Part"]).toEqual({ type: "object", properties: { name: { type: "string" } } });
    expect(properties.labels).toEqual({ type: "object", additionalProperties: { type: "string" } });
    expect(properties.tags).toEqual({ type: "array", items: { type: "string" } });
  });

  it("descriptions come from leading comments only: a location without one adds none, an RPC without one has none", () => {
    const { put, properties } = built();
    expect(put.requestBody!.content["application/json"].schema.description).toBe("A thing to ask for.");
    expect(properties.share).toEqual({ type: "number", description: "The share." });
    expect(properties.ratio).not.toHaveProperty("description");
    expect(put.description).toBe("");
  });

  it("a 64-bit integer is a decimal string and says so; a string with only a maximum length has no minimum", () => {
    const { properties } = built();
    expect(properties.total).toMatchObject({ type: "string", format: "int64" });
    expect(properties.total!.description).toMatch(/string/);
    expect(properties.note).toEqual({ type: "string", maxLength: 10 });
  });

  it("string and list limits become JSON Schema limits; string rules of a list apply to its strings, not to its messages", () => {
    const { properties } = built();
    expect(properties.code).toMatchObject({ type: "string", minLength: 2 });
    expect(properties.aliases).toEqual({ type: "array", items: { type: "string", minLength: 1, maxLength: 20 }, minItems: 1, maxItems: 5 });
    expect(properties.keys).toMatchObject({ type: "array", items: { type: "string" }, minItems: 2 });
    expect(properties.pieces).toEqual({ type: "array", items: { $ref: "#/components/schemas/gatehouse.test.v1.Part" }, maxItems: 3 });
    expect(properties.plainList).toMatchObject({ type: "array", items: { type: "string", minLength: 3 }, maxItems: 4 });
  });

  // buf.validate's limits are proto2 optionals (read as 0 when unset): an unset maximum must not become 0.
  it("a limit the rule does not set is not in the schema", () => {
    const { properties } = built();
    expect(properties.code).toEqual({ type: "string", minLength: 2 });
    expect(properties.keys).toEqual({ type: "array", items: { type: "string" }, minItems: 2 });
    expect(properties.plainList).toEqual({ type: "array", items: { type: "string", minLength: 3 }, maxItems: 4 });
  });

  it("a field with a required rule or a minimum length is required; no other is", () => {
    const { put } = built();
    const required = put.requestBody!.content["application/json"].schema.required as string[];
    expect(required).toEqual(expect.arrayContaining(["code", "owner"]));
    expect(required).not.toContain("note");
    expect(required).not.toContain("ratio");
    expect(required).not.toContain("aliases");
  });

  it("nested messages and enums, and top-level enums, are described by their comments", () => {
    const { document, properties } = built();
    expect(properties.window).toEqual({ $ref: "#/components/schemas/gatehouse.test.v1.ThingRequest.Window" });
    expect(document.components.schemas["gatehouse.test.v1.ThingRequest.Window"]).toMatchObject({ description: "A window of time." });
    expect(properties.mood).toEqual({ type: "string", enum: ["MOOD_UNSPECIFIED", "MOOD_GOOD"], description: "How the thing feels." });
    expect(properties.colour).toEqual({ type: "string", enum: ["COLOUR_UNSPECIFIED", "COLOUR_RED"], description: "A colour." });
  });

  it("a message that contains itself is one schema that refers to itself", () => {
    const { document, properties } = built();
    expect(properties.tree).toEqual({ $ref: "#/components/schemas/gatehouse.test.v1.Tree" });
    expect(document.components.schemas["gatehouse.test.v1.Tree"]).toEqual({
      type: "object",
      properties: { children: { type: "array", items: { $ref: "#/components/schemas/gatehouse.test.v1.Tree" } } },
    });
  });

  it("a route without body has no request body; a file without source info has no descriptions; a custom method no path", () => {
    const bare = buildOpenApi([thingsFile(false)], registry, "0.0.0") as unknown as Document;
    // Only Gatehouse's own files (gatehouse/…) are described: not a vendored file's annotated RPC.
    expect(Object.keys(bare.paths)).toEqual(["/v1/things/{thing_id}"]);
    expect(Object.keys(bare.paths["/v1/things/{thing_id}"]!).sort()).toEqual(["get", "put"]);
    expect(bare.paths["/v1/things/{thing_id}"]!.get).not.toHaveProperty("requestBody");
    // An answer without details (ThingResponse) gets no ETag, and no operation here is deprecated: no headers at all.
    expect((bare.paths["/v1/things/{thing_id}"]!.get as unknown as { responses: Record<string, object> }).responses["200"]).not.toHaveProperty("headers");
    expect(bare.paths["/v1/things/{thing_id}"]!.put!.requestBody!.content["application/json"].schema).not.toHaveProperty("description");
  });
});

const MAX_BYTES = 4096;

describe("REST transcoding of the annotated service", () => {
  let url = "";
  let hanging = 0;
  let cancelled = 0;
  let server: http.Server;
  // Per test, not once: building the routes is part of what each test checks (and mutation testing attributes
  // only code that runs inside a test, hooks per test included).
  beforeEach(async () => {
    const gateway = createRestGateway({
      routes: (router) =>
        router.service(service, {
          getThing: async (request: Message & { thingId?: string }, context: HandlerContext) => {
            if (request.thingId === "hang") {
              hanging += 1;
              await new Promise((resolve) => context.signal.addEventListener("abort", resolve));
              cancelled += 1;
            }
            return { echo: JSON.stringify(toJson(requestSchema, request)) };
          },
          countThings: (request: Message) => ({ echo: JSON.stringify(toJson(requestSchema, request)) }),
          pokeThing: (request: Message) => ({ echo: JSON.stringify(toJson(requestSchema, request)) }),
          updateThing: (request: Message) => ({ echo: JSON.stringify(toJson(requestSchema, request)) }),
        } as never),
      // The RPC's own interceptors run for a REST call (here one that marks its answers).
      interceptors: [
        (next) => async (request) => {
          const response = await next(request);
          response.header.set("x-seen-by", "interceptor");
          return response;
        },
      ],
      maxRequestBytes: MAX_BYTES,
      reject: (_request, _handler, error) => (error instanceof ConnectError ? error : fromDomainError(error)),
    });
    server = http.createServer((req, res) => {
      void gateway(req, res, "test-request").then((handled) => {
        if (!handled) {
          res.writeHead(404);
          res.end();
        }
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterEach(() => new Promise<void>((resolve) => server.close(() => resolve())));

  async function get(path: string) {
    const response = await fetch(`${url}${path}`);
    const json = (await response.json()) as { echo?: string; code?: number; message?: string };
    return { status: response.status, seenBy: response.headers.get("x-seen-by"), json, echo: json.echo === undefined ? undefined : (JSON.parse(json.echo) as Record<string, unknown>) };
  }

  it("takes the request fields from query parameters, by proto name or JSON name; the path parameter wins", async () => {
    const answer = await get("/v1/things/t-1?count=3&max_items=7&ratio=0.5&thing_id=other&thingId=other");
    expect(answer.status).toBe(200);
    expect(answer.seenBy).toBe("interceptor");
    expect(answer.echo).toEqual({ thingId: "t-1", count: 3, maxItems: 7, ratio: 0.5 });
    expect((await get("/v1/things/t-2?maxItems=9")).echo).toEqual({ thingId: "t-2", maxItems: 9 });
  });

  it("a repeated field takes every value of its parameter, in order; a single field the first", async () => {
    expect((await get("/v1/things/t-3?tags=b&tags=a&tags=c&count=1&count=2")).echo).toEqual({ thingId: "t-3", tags: ["b", "a", "c"], count: 1 });
    expect((await get("/v1/things/t-4?tags=only")).echo).toEqual({ thingId: "t-4", tags: ["only"] });
    // A repeated field named by its JSON name, and by its proto name.
    expect((await get("/v1/things/t-7?extraTags=x&extraTags=y")).echo).toEqual({ thingId: "t-7", extraTags: ["x", "y"] });
    expect((await get("/v1/things/t-8?extra_tags=x&extra_tags=y")).echo).toEqual({ thingId: "t-8", extraTags: ["x", "y"] });
  });

  it("a query parameter that names no field is refused like an unknown JSON key: 400 invalid_argument", async () => {
    // `flavour` is no field of ThingRequest (by proto name or JSON name).
    const answer = await get("/v1/things/t-5?flavour=red");
    expect(answer.status).toBe(400);
    expect(answer.json.code).toBe(3);
    expect(answer.json.message).toContain("flavour");
  });

  it("an RPC whose annotation is a custom HTTP method has no REST route", async () => {
    for (const method of ["POST", "GET"]) {
      const response = await fetch(`${url}/v1/pokes/t-9`, { method, ...(method === "POST" ? { body: "{}" } : {}) });
      expect(response.status).toBe(404);
    }
  });

  it("the route with body \"*\" takes no query parameter", async () => {
    const response = await fetch(`${url}/v1/things/t-6?count=5&colour=red`, { method: "PUT", headers: { "content-type": "application/json" }, body: '{"count": 2}' });
    expect(response.status).toBe(200);
    const { echo } = (await response.json()) as { echo: string };
    expect(JSON.parse(echo)).toEqual({ thingId: "t-6", count: 2 });
  });

  async function put(path: string, body: string) {
    const response = await fetch(`${url}${path}`, { method: "PUT", headers: { "content-type": "application/json" }, body });
    const json = (await response.json()) as { echo?: string; code?: number; message?: string; details?: { reason?: string }[] };
    return { status: response.status, json, echo: json.echo === undefined ? undefined : (JSON.parse(json.echo) as Record<string, unknown>) };
  }

  it("an empty or white-space body is the empty message", async () => {
    expect(await put("/v1/things/e-1", "")).toMatchObject({ status: 200, echo: { thingId: "e-1" } });
    expect(await put("/v1/things/e-2", " \n\t ")).toMatchObject({ status: 200, echo: { thingId: "e-2" } });
  });

  it("a body that is no JSON is 400 request.malformed saying so", async () => {
    const answer = await put("/v1/things/e-3", "{nope");
    expect(answer.status).toBe(400);
    expect(answer.json).toMatchObject({ code: 3, message: "the body is not valid JSON" });
    expect(answer.json.details?.[0]?.reason).toBe("request.malformed");
  });

  it("a body of exactly the size limit is read; one byte more is 429 naming the limit", async () => {
    const padded = (size: number) => `{"count": 4}${" ".repeat(size - '{"count": 4}'.length)}`;
    expect(await put("/v1/things/s-1", padded(MAX_BYTES))).toMatchObject({ status: 200, echo: { thingId: "s-1", count: 4 } });
    const over = await put("/v1/things/s-2", padded(MAX_BYTES + 1));
    expect(over.status).toBe(429);
    expect(over.json).toMatchObject({ code: 8, message: `request body larger than ${MAX_BYTES} bytes` });
    expect(over.json.details?.[0]?.reason).toBe("request.too_large");
  });

  it("a route without body reads no body", async () => {
    const answer = await new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = http.request(`${url}/v1/things/g-1?count=2`, { method: "GET", headers: { "content-type": "application/json", "content-length": "13" } }, (res) => {
        let text = "";
        res.on("data", (chunk: Buffer) => (text += chunk.toString("utf8")));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, text }));
      });
      req.on("error", reject);
      req.end('{"ratio": 95}');
    });
    expect(answer.status).toBe(200);
    expect(JSON.parse((JSON.parse(answer.text) as { echo: string }).echo)).toEqual({ thingId: "g-1", count: 2 });
  });

  it("a method the path does not take is 405 with every method it takes in Allow and in the message", async () => {
    const response = await fetch(`${url}/v1/things/m-1`, { method: "DELETE" });
    expect(response.status).toBe(405);
    expect(response.headers.get("allow")).toBe("GET, PUT");
    expect(((await response.json()) as { message: string }).message).toBe("method DELETE not allowed; allowed: GET, PUT");
  });

  it("a path parameter that is no percent-encoded UTF-8 is 400 naming the parameter and what is wrong", async () => {
    const answer = await put("/v1/things/%ZZ", "{}");
    expect(answer.status).toBe(400);
    expect(answer.json.message).toBe("path parameter thing_id is not a valid percent-encoded UTF-8 path segment");
    const violations = (answer.json.details as { fieldViolations?: { field: string; description: string }[] }[]).flatMap((d) => d.fieldViolations ?? []);
    expect(violations).toEqual([{ field: "thing_id", description: "is not a valid percent-encoded UTF-8 path segment" }]);
  });

  it("a caller that hangs up cancels the call it started", async () => {
    const before = cancelled;
    const controller = new AbortController();
    const call = fetch(`${url}/v1/things/hang`, { signal: controller.signal }).catch(() => undefined);
    await eventually(() => hanging > cancelled, { what: "the call to reach its handler" });
    controller.abort();
    await call;
    await eventually(() => cancelled > before, { what: "the handler to see the call cancelled" });
    expect(cancelled).toBe(before + 1);
  });
});
