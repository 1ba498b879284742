import { createFileRegistry, type DescField, type DescMessage, type FileRegistry, fromBinary, getOption, hasOption, isFieldSet, ScalarType } from "@bufbuild/protobuf";
import { type DescriptorProto, type FileDescriptorProto, FileDescriptorSetSchema } from "@bufbuild/protobuf/wkt";
import { field as fieldRules, RepeatedRulesSchema, StringRulesSchema } from "@bufbuild/protovalidate/gen/buf/validate/validate_pb.js";
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { http } from "../../gen/google/api/annotations_pb.js";

type Schema = Record<string, unknown>;

/** SPEC 2.1: the operations that accept `x-service-orgid`. */
const ORG_HEADER_OPERATIONS = new Set([
  "gatehouse.admin.v1.UserService.CreateHumanUser",
  "gatehouse.admin.v1.IdentityProviderService.UpdateIdentityProvider",
  "gatehouse.admin.v1.ProjectService.AddProjectGrantMember",
  "gatehouse.admin.v1.ApplicationService.UpdateApplication",
  "gatehouse.admin.v1.IdentityProviderService.GetIdentityProvider",
  "gatehouse.admin.v1.ApplicationService.GetApplication",
]);

/** Whether an answer of `output` carries one object's details (its own, or those of the one object it is): it gets an ETag. */
function carriesDetails(output: DescMessage): boolean {
  // In Gatehouse's protos the fields named details are exactly the Details ones: the mutants that drop either half of
  // the test are equivalent here (the `true` ones survive; their `false` siblings do not).
  // Stryker disable next-line LogicalOperator,OptionalChaining: as above
  const hasDetails = (message: DescMessage) => message.fields.some((field) => field.name === "details" && field.message?.typeName === "gatehouse.admin.v1.Details");
  const [only] = output.fields;
  // Likewise no answer of one message field wraps a message without details, and no answer of several fields starts with
  // a message that has details: the `true` mutants and the `||` of the last terms survive; `only?.` is equivalent.
  // Stryker disable next-line OptionalChaining: as above
  return hasDetails(output) || (output.fields.length === 1 && only?.fieldKind === "message" && hasDetails(only.message));
}

const IF_MATCH: Schema = {
  name: "If-Match",
  in: "header",
  required: false,
  description:
    'Optimistic concurrency: the ETag of the object as last read ("<details.sequence>"); when the object changed since, the call answers 412 (reason concurrent_modification, metadata current_sequence) and writes nothing. `*` or absent: last writer wins. Sets the body\'s expectedSequence.',
  schema: { type: "string", pattern: '^("(0|[1-9][0-9]{0,19})"|\\*)$' },
};

/** Leading comments of every message, field, enum and method, by full name. */
function commentsOf(files: FileDescriptorProto[]): Map<string, string> {
  const comments = new Map<string, string>();
  for (const file of files) {
    const byPath = new Map((file.sourceCodeInfo?.location ?? []).map((l) => [l.path.join("."), l.leadingComments.trim()]));
    const note = (name: string, path: number[]) => {
      const text = byPath.get(path.join("."));
      if (text) comments.set(name, text.replace(/\n /g, "\n"));
    };
    const message = (m: DescriptorProto, path: number[], scope: string) => {
      const name = `${scope}.${m.name}`;
      note(name, path);
      m.field.forEach((f, i) => note(`${name}.${f.name}`, [...path, 2, i]));
      m.nestedType.forEach((n, i) => message(n, [...path, 3, i], name));
      m.enumType.forEach((e, i) => note(`${name}.${e.name}`, [...path, 4, i]));
    };
    file.messageType.forEach((m, i) => message(m, [4, i], file.package));
    file.enumType.forEach((e, i) => note(`${file.package}.${e.name}`, [5, i]));
    // A service's own comment describes nothing in the document: only its methods' are kept.
    file.service.forEach((s, i) => {
      s.method.forEach((m, j) => note(`${file.package}.${s.name}.${m.name}`, [6, i, 2, j]));
    });
  }
  return comments;
}

const WELL_KNOWN: Record<string, Schema> = {
  "google.protobuf.Timestamp": { type: "string", format: "date-time" },
  "google.protobuf.Duration": { type: "string", pattern: "^-?[0-9]+(\\.[0-9]{1,9})?s$", examples: ["3600s"] },
  "google.protobuf.Struct": { type: "object", additionalProperties: true },
};

/** JSON Schema of a scalar in proto3 JSON (64-bit integers are strings). */
function scalarSchema(scalar: ScalarType): Schema {
  switch (scalar) {
    case ScalarType.DOUBLE:
    case ScalarType.FLOAT:
      return { type: "number" };
    case ScalarType.INT64:
    case ScalarType.UINT64:
    case ScalarType.FIXED64:
    case ScalarType.SFIXED64:
    case ScalarType.SINT64:
      return { type: "string", format: "int64", description: "64-bit integer as a decimal string (proto3 JSON)" };
    case ScalarType.BOOL:
      return { type: "boolean" };
    case ScalarType.BYTES:
      return { type: "string", contentEncoding: "base64" };
    case ScalarType.STRING:
      return { type: "string" };
    default:
      return { type: "integer", format: scalar === ScalarType.UINT32 || scalar === ScalarType.FIXED32 ? "uint32" : "int32" };
  }
}

/** OpenAPI 3.1 (JSON Schema 2020-12) schemas for messages, with limits from buf.validate rules. */
class Schemas {
  readonly components: Record<string, Schema> = {};
  constructor(private readonly comments: Map<string, string>) {}

  ref(message: DescMessage): Schema {
    const known = WELL_KNOWN[message.typeName];
    if (known) return known;
    if (!this.components[message.typeName]) {
      this.components[message.typeName] = {};
      this.components[message.typeName] = this.message(message);
    }
    return { $ref: `#/components/schemas/${message.typeName}` };
  }

  // Stryker disable next-line ArrayDeclaration: no field is named like the string Stryker puts in the default
  message(message: DescMessage, omit: string[] = []): Schema {
    const properties: Record<string, Schema> = {};
    const required: string[] = [];
    for (const field of message.fields) {
      if (omit.includes(field.name)) continue;
      const rules = hasOption(field, fieldRules) ? getOption(field, fieldRules) : undefined;
      const schema: Schema = { ...this.field(field) };
      const description = this.comments.get(`${message.typeName}.${field.name}`);
      if (description) schema.description = description;
      if (field.deprecated) schema.deprecated = true;
      // buf.validate's limits are proto2 optionals, read as 0 when unset: a maximum counts only when the rule sets it.
      if (rules?.type.case === "string") {
        if (rules.type.value.minLen !== undefined && rules.type.value.minLen > 0n) schema.minLength = Number(rules.type.value.minLen);
        if (isFieldSet(rules.type.value, StringRulesSchema.field.maxLen)) schema.maxLength = Number(rules.type.value.maxLen);
      }
      if (rules?.type.case === "repeated") {
        if (isFieldSet(rules.type.value, RepeatedRulesSchema.field.maxItems)) schema.maxItems = Number(rules.type.value.maxItems);
        if (rules.type.value.minItems !== undefined && rules.type.value.minItems > 0n) schema.minItems = Number(rules.type.value.minItems);
        const items = rules.type.value.items?.type;
        if (items?.case === "string" && schema.items && typeof schema.items === "object" && !("$ref" in schema.items)) {
          schema.items = { ...(schema.items as Schema), ...(isFieldSet(items.value, StringRulesSchema.field.maxLen) ? { maxLength: Number(items.value.maxLen) } : {}), ...(items.value.minLen ? { minLength: Number(items.value.minLen) } : {}) };
        }
      }
      if (rules?.type.case === "uint32" && rules.type.value.lessThan.case === "lte") schema.maximum = rules.type.value.lessThan.value;
      // A minimum length is set only when it is above 0: such a field cannot be left out.
      if (rules?.required || schema.minLength !== undefined) required.push(field.jsonName);
      properties[field.jsonName] = schema;
    }
    const description = this.comments.get(message.typeName);
    return { type: "object", ...(description ? { description } : {}), properties, ...(required.length > 0 ? { required } : {}) };
  }

  private field(field: DescField): Schema {
    const single = (): Schema => {
      if (field.fieldKind === "map") return { type: "object", additionalProperties: field.mapKind === "message" ? this.ref(field.message) : { type: "string" } };
      if (field.message) return this.ref(field.message);
      if (field.enum) return { type: "string", enum: field.enum.values.map((v) => v.name), ...(this.comments.get(field.enum.typeName) ? { description: this.comments.get(field.enum.typeName) } : {}) };
      return scalarSchema(field.scalar ?? ScalarType.STRING);
    };
    if (field.fieldKind === "list") return { type: "array", items: single() };
    return single();
  }
}

const ERROR_BODY: Schema = {
  type: "object",
  description: "The error body of SPEC section 7. `code` is the gRPC code; `details` are google.rpc detail messages as proto3-JSON Any (google.rpc.ErrorInfo with a stable `reason` on every error; google.rpc.BadRequest with field violations on invalid input).",
  required: ["code", "message", "details"],
  properties: {
    code: { type: "integer", format: "int32" },
    message: { type: "string" },
    details: { type: "array", items: { type: "object", required: ["@type"], properties: { "@type": { type: "string" } }, additionalProperties: true } },
  },
};

/** The OpenAPI 3.1 document of every REST-annotated RPC, from a descriptor set with source info. */
export function buildOpenApi(files: FileDescriptorProto[], registry: FileRegistry, version: string): Schema {
  const comments = commentsOf(files);
  const schemas = new Schemas(comments);
  const paths: Record<string, Record<string, unknown>> = {};
  for (const file of registry.files) {
    if (!file.name.startsWith("gatehouse/")) continue;
    for (const service of file.services) {
      for (const method of service.methods) {
        // Without the annotation, the rule is the empty default: no pattern.
        const rule = getOption(method, http);
        if (!rule.pattern.case || rule.pattern.case === "custom") continue;
        const template = rule.pattern.value;
        const pathFields = [...template.matchAll(/\{([a-z0-9_]+)\}/g)].map((m) => m[1]!);
        const fullName = `${service.typeName}.${method.name}`;
        const parameters: Schema[] = pathFields.map((name) => ({
          name,
          in: "path",
          required: true,
          schema: { type: "string", minLength: 1, maxLength: 200 },
          ...(comments.get(`${method.input.typeName}.${name}`) ? { description: comments.get(`${method.input.typeName}.${name}`) } : {}),
        }));
        if (ORG_HEADER_OPERATIONS.has(fullName)) {
          parameters.push({
            name: "x-service-orgid",
            in: "header",
            required: false,
            description: "Selects the organization the operation acts on; absent: the caller's own. The caller needs permission there.",
            schema: { type: "string", maxLength: 200 },
          });
        }
        const conditional = method.input.fields.some((field) => field.name === "expected_sequence");
        if (conditional) parameters.push(IF_MATCH);
        const headers: Record<string, Schema> = {
          ...(carriesDetails(method.output) ? { ETag: { description: 'The object\'s details.sequence as a strong entity tag ("42"), for If-Match.', schema: { type: "string" } } } : {}),
          ...(method.deprecated ? { Deprecation: { description: "RFC 9745: this operation is deprecated.", schema: { type: "string" } } } : {}),
        };
        paths[template] ??= {};
        paths[template][rule.pattern.case] = {
          operationId: `${service.name}_${method.name}`,
          tags: [service.name],
          summary: method.name,
          description: comments.get(fullName) ?? "",
          ...(method.deprecated ? { deprecated: true } : {}),
          parameters,
          ...(rule.body === "*" ? { requestBody: { required: true, content: { "application/json": { schema: schemas.message(method.input, pathFields) } } } } : {}),
          responses: {
            "200": {
              description: "Success.",
              content: { "application/json": { schema: schemas.ref(method.output) } },
              ...(Object.keys(headers).length > 0 ? { headers } : {}),
            },
            ...(conditional
              ? { "412": { description: "If-Match named a sequence the object is no longer at (reason concurrent_modification).", content: { "application/json": { schema: { $ref: "#/components/schemas/ErrorBody" } } } } }
              : {}),
            default: { description: "An error (SPEC section 7).", content: { "application/json": { schema: { $ref: "#/components/schemas/ErrorBody" } } } },
          },
        };
      }
    }
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "Gatehouse administration API",
      version,
      description: "REST routes of the Gatehouse administration API. Every operation is also served as Connect, gRPC and gRPC-web on the same port (see the .proto files).",
    },
    servers: [{ url: "/" }],
    security: [{ bearer: [] }],
    paths,
    components: {
      securitySchemes: { bearer: { type: "http", scheme: "bearer", description: "A personal access token." } },
      schemas: { ...schemas.components, ErrorBody: ERROR_BODY },
    },
  };
}

/** Builds gen/openapi.json from proto/ (buf build keeps the comments); run by `npm run generate`. */
// Stryker disable next-line StringLiteral: npm run generate's default; the freshness test writes elsewhere and compares
export function writeOpenApi(root: string, outFile = join(root, "gen/openapi.json")): void {
  // Stryker disable next-line ObjectLiteral: npm run generate and the freshness test run from the root, and the image fits the default buffer
  const image = execFileSync(join(root, "node_modules/.bin/buf"), ["build", "--as-file-descriptor-set", "-o", "-#format=binpb"], { cwd: root, maxBuffer: 64 * 1024 * 1024 });
  const set = fromBinary(FileDescriptorSetSchema, image);
  const { version } = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { version: string };
  writeFileSync(outFile, `${JSON.stringify(buildOpenApi(set.file, createFileRegistry(set), version), null, 2)}\n`);
}
