import { create, createFileRegistry, type DescService, setExtension } from "@bufbuild/protobuf";
import { FieldDescriptorProto_Label as Label, FieldDescriptorProto_Type as Type, FileDescriptorProtoSchema, MethodOptionsSchema } from "@bufbuild/protobuf/wkt";
import { ConnectError } from "@connectrpc/connect";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { file_gatehouse_admin_v1_details } from "../../gen/gatehouse/admin/v1/details_pb.js";
import { http as httpRule } from "../../gen/google/api/annotations_pb.js";
import { HttpRuleSchema } from "../../gen/google/api/http_pb.js";
import { fromDomainError } from "../../src/interceptors/error-mapping.js";
import { createRestGateway } from "../../src/rest/gateway.js";
import { buildOpenApi } from "../../src/rest/openapi.js";

// ETag and If-Match are the gateway's and the OpenAPI generator's, for every annotated RPC — not a list of routes:
// an answer gets an ETag exactly when it carries ONE object's details (its own `details`, or those of the one object
// it consists of); a list, two objects, or an answer without details gets none. Shown on a small service built in
// memory with the answer shapes the Gatehouse REST routes lack.

const getRoute = (path: string) => {
  const options = create(MethodOptionsSchema);
  setExtension(options, httpRule, create(HttpRuleSchema, { pattern: { case: "get", value: path } }));
  return options;
};
const field = (name: string, number: number, type: Type, extra: Record<string, unknown> = {}) => ({ name, number, type, label: Label.OPTIONAL, jsonName: name, ...extra });
const DETAILS = ".gatehouse.admin.v1.Details";
const WIDGET = ".gatehouse.test.v1.Widget";

const widgetsFile = create(FileDescriptorProtoSchema, {
  name: "gatehouse/test/v1/widgets.proto",
  package: "gatehouse.test.v1",
  syntax: "proto3",
  dependency: ["gatehouse/admin/v1/details.proto"],
  messageType: [
    { name: "Empty", field: [] },
    { name: "Widget", field: [field("name", 1, Type.STRING), field("details", 2, Type.MESSAGE, { typeName: DETAILS })] },
    { name: "OneWidget", field: [field("widget", 1, Type.MESSAGE, { typeName: WIDGET })] },
    { name: "TwoWidgets", field: [field("left", 1, Type.MESSAGE, { typeName: WIDGET }), field("right", 2, Type.MESSAGE, { typeName: WIDGET })] },
    { name: "Widgets", field: [field("widgets", 1, Type.MESSAGE, { typeName: WIDGET, label: Label.REPEATED })] },
    { name: "Echo", field: [field("echo", 1, Type.STRING)] },
  ],
  service: [
    {
      name: "WidgetService",
      method: [
        { name: "Written", inputType: ".gatehouse.test.v1.Empty", outputType: WIDGET, options: getRoute("/v1/written") },
        { name: "GetWidget", inputType: ".gatehouse.test.v1.Empty", outputType: ".gatehouse.test.v1.OneWidget", options: getRoute("/v1/widget") },
        { name: "GetPair", inputType: ".gatehouse.test.v1.Empty", outputType: ".gatehouse.test.v1.TwoWidgets", options: getRoute("/v1/pair") },
        { name: "ListWidgets", inputType: ".gatehouse.test.v1.Empty", outputType: ".gatehouse.test.v1.Widgets", options: getRoute("/v1/widgets") },
        { name: "Ping", inputType: ".gatehouse.test.v1.Empty", outputType: ".gatehouse.test.v1.Echo", options: getRoute("/v1/ping") },
      ],
    },
  ],
});

const registry = createFileRegistry(widgetsFile, (name) => (name === "gatehouse/admin/v1/details.proto" ? file_gatehouse_admin_v1_details : undefined));
const service = registry.getService("gatehouse.test.v1.WidgetService") as DescService;
const widget = (name: string, sequence: bigint) => ({ name, details: { sequence } });

describe("ETag of REST answers, by the answer's shape", () => {
  let url = "";
  let server: http.Server;
  beforeEach(async () => {
    const gateway = createRestGateway({
      routes: (router) =>
        router.service(service, {
          written: () => widget("w", 41n),
          getWidget: () => ({ widget: widget("w", 42n) }),
          getPair: () => ({ left: widget("l", 43n), right: widget("r", 44n) }),
          listWidgets: () => ({ widgets: [widget("only", 45n)] }),
          ping: () => ({ echo: "pong" }),
        } as never),
      interceptors: [],
      maxRequestBytes: 1024,
      reject: (_request, _handler, error) => (error instanceof ConnectError ? error : fromDomainError(error)),
    });
    server = http.createServer((req, res) => void gateway(req, res, "test-request"));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterEach(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const etagOf = async (path: string) => {
    const response = await fetch(`${url}${path}`);
    expect(response.status).toBe(200);
    return response.headers.get("etag");
  };

  it("an answer with its own details (a write's) gets its sequence", async () => {
    expect(await etagOf("/v1/written")).toBe('"41"');
  });

  it("an answer that is one object (a read's) gets that object's sequence", async () => {
    expect(await etagOf("/v1/widget")).toBe('"42"');
  });

  it("two objects, a list, or no details at all: no ETag", async () => {
    expect(await etagOf("/v1/pair")).toBeNull();
    expect(await etagOf("/v1/widgets")).toBeNull();
    expect(await etagOf("/v1/ping")).toBeNull();
  });

  it("If-Match on a route whose call takes no expected_sequence is refused, naming it", async () => {
    const response = await fetch(`${url}/v1/widget`, { headers: { "if-match": '"42"' } });
    expect(response.status).toBe(400);
    expect(JSON.stringify(await response.json())).toContain('"field":"If-Match"');
  });
});

describe("OpenAPI: ETag by the answer's shape, If-Match only where the call takes expected_sequence", () => {
  const document = buildOpenApi([widgetsFile], registry, "0.0.0") as unknown as {
    paths: Record<string, { get: { parameters: { name: string }[]; responses: Record<string, { headers?: Record<string, unknown> }> } }>;
  };
  const headersOf = (path: string) => Object.keys(document.paths[path]!.get.responses["200"]!.headers ?? {});

  it("documents ETag for one object's details and for no other answer", () => {
    expect(headersOf("/v1/written")).toEqual(["ETag"]);
    expect(headersOf("/v1/widget")).toEqual(["ETag"]);
    expect(headersOf("/v1/pair")).toEqual([]);
    expect(headersOf("/v1/widgets")).toEqual([]);
    expect(headersOf("/v1/ping")).toEqual([]);
  });

  it("documents neither If-Match nor 412 for calls without expected_sequence", () => {
    for (const path of Object.keys(document.paths)) {
      expect(document.paths[path]!.get.parameters.map((p) => p.name)).not.toContain("If-Match");
      expect(Object.keys(document.paths[path]!.get.responses)).not.toContain("412");
    }
  });
});
