// Refreshes the third-party .proto files under proto/vendor/ from installed npm packages, with no network.
//
// - google/api and google/rpc come from google-proto-files;
// - grpc health and reflection come from grpc-health-check and @grpc/reflection;
// - buf/validate/validate.proto ships in no package and the buf registry is unreachable, so it is printed
//   from the descriptor embedded in @bufbuild/protovalidate. That copy is compile-only: it keeps every
//   message, enum, field and extension (numbers, types, labels) but drops options such as the CEL
//   rules of predefined constraints; generated code imports the real runtime types from the package.
import { cpSync, mkdirSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { file_buf_validate_validate } from "@bufbuild/protovalidate/gen/buf/validate/validate_pb.js";
import { isFieldSet } from "@bufbuild/protobuf";
import {
  FieldDescriptorProtoSchema,
  FieldDescriptorProto_Label as Label,
  FieldDescriptorProto_Type as Type,
} from "@bufbuild/protobuf/wkt";

// Writes next to this script, or into the directory given as the first argument (the freshness test).
const vendorDir = process.argv[2] ?? dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);
const packageDir = (name) => dirname(require.resolve(`${name}/package.json`));

const copies = [
  ["google-proto-files", "google/api/annotations.proto", "google/api/annotations.proto"],
  ["google-proto-files", "google/api/http.proto", "google/api/http.proto"],
  ["google-proto-files", "google/rpc/error_details.proto", "google/rpc/error_details.proto"],
  ["google-proto-files", "google/rpc/status.proto", "google/rpc/status.proto"],
  ["grpc-health-check", "proto/health/v1/health.proto", "grpc/health/v1/health.proto"],
  ["@grpc/reflection", "build/proto/grpc/reflection/v1/reflection.proto", "grpc/reflection/v1/reflection.proto"],
  ["@grpc/reflection", "build/proto/grpc/reflection/v1alpha/reflection.proto", "grpc/reflection/v1alpha/reflection.proto"],
];
for (const [pkg, from, to] of copies) {
  mkdirSync(dirname(join(vendorDir, to)), { recursive: true });
  cpSync(join(packageDir(pkg), from), join(vendorDir, to));
}

const scalarNames = {
  [Type.DOUBLE]: "double", [Type.FLOAT]: "float", [Type.INT64]: "int64", [Type.UINT64]: "uint64",
  [Type.INT32]: "int32", [Type.FIXED64]: "fixed64", [Type.FIXED32]: "fixed32", [Type.BOOL]: "bool",
  [Type.STRING]: "string", [Type.BYTES]: "bytes", [Type.UINT32]: "uint32", [Type.SFIXED32]: "sfixed32",
  [Type.SFIXED64]: "sfixed64", [Type.SINT32]: "sint32", [Type.SINT64]: "sint64",
};

function printField(field, indent, inOneof) {
  const type = field.typeName || scalarNames[field.type];
  const label = inOneof ? "" : field.label === Label.REPEATED ? "repeated " : field.label === Label.REQUIRED ? "required " : "optional ";
  return `${indent}${label}${type} ${field.name} = ${field.number};`;
}

function printEnum(e, indent) {
  const values = e.value.map((v) => `${indent}  ${v.name} = ${v.number};`);
  return [`${indent}enum ${e.name} {`, ...values, `${indent}}`].join("\n");
}

function printReserved(message, indent) {
  const lines = message.reservedRange.map((r) => `${indent}  reserved ${r.start === r.end - 1 ? r.start : `${r.start} to ${r.end - 1}`};`);
  if (message.reservedName.length > 0) lines.push(`${indent}  reserved ${message.reservedName.map((n) => `"${n}"`).join(", ")};`);
  return lines;
}

function printMessage(message, indent) {
  const inner = indent + "  ";
  const lines = [`${indent}message ${message.name} {`];
  for (const nested of message.nestedType) lines.push(printMessage(nested, inner));
  for (const e of message.enumType) lines.push(printEnum(e, inner));
  lines.push(...printReserved(message, indent));
  for (const range of message.extensionRange) lines.push(`${inner}extensions ${range.start} to ${range.end >= 536870912 ? "max" : range.end - 1};`);
  const oneofFields = new Map();
  for (const field of message.field) {
    // proto2 reads an unset oneof_index as 0, so ask for presence rather than the value.
    const inOneof = isFieldSet(field, FieldDescriptorProtoSchema.field.oneofIndex) && !field.proto3Optional;
    if (!inOneof) lines.push(printField(field, inner, false));
    else oneofFields.set(field.oneofIndex, [...(oneofFields.get(field.oneofIndex) ?? []), field]);
  }
  for (const [index, fields] of oneofFields) {
    lines.push(`${inner}oneof ${message.oneofDecl[index].name} {`, ...fields.map((f) => printField(f, inner + "  ", true)), `${inner}}`);
  }
  lines.push(`${indent}}`);
  return lines.join("\n");
}

function printExtensions(extensions) {
  const byExtendee = new Map();
  for (const x of extensions) byExtendee.set(x.extendee, [...(byExtendee.get(x.extendee) ?? []), x]);
  return [...byExtendee].map(([extendee, fields]) => [`extend ${extendee} {`, ...fields.map((f) => printField(f, "  ", false)), "}"].join("\n"));
}

const file = file_buf_validate_validate.proto;
const validateProto = [
  "// GENERATED by proto/vendor/update-vendored.mjs from the descriptor embedded in @bufbuild/protovalidate.",
  "// Compile-only copy: options (CEL rules of predefined constraints) are dropped. Do not edit.",
  `syntax = "${file.syntax || "proto2"}";`,
  `package ${file.package};`,
  ...file.dependency.map((d) => `import "${d}";`),
  `option go_package = "buf.build/gen/go/bufbuild/protovalidate/protocolbuffers/go/buf/validate";`,
  ...file.messageType.map((m) => printMessage(m, "")),
  ...file.enumType.map((e) => printEnum(e, "")),
  ...printExtensions(file.extension),
  "",
].join("\n\n");
mkdirSync(join(vendorDir, "buf/validate"), { recursive: true });
writeFileSync(join(vendorDir, "buf/validate/validate.proto"), validateProto);
console.log("vendored protos updated in", vendorDir);
