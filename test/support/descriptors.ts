import { create, createFileRegistry, type DescFile, type DescMessage, type MessageInitShape } from "@bufbuild/protobuf";
import {
  file_google_protobuf_duration,
  file_google_protobuf_struct,
  file_google_protobuf_timestamp,
  file_google_protobuf_wrappers,
  FileDescriptorProtoSchema,
} from "@bufbuild/protobuf/wkt";

/** Field types and labels of descriptor.proto, for message shapes built in a test. */
export const TYPE_INT32 = 5;
export const TYPE_STRING = 9;
export const TYPE_MESSAGE = 11;
export const OPTIONAL = 1;
export const REPEATED = 3;

/** A FieldDescriptorProto init (json name derived as protoc does). */
export const field = (name: string, number: number, type: number, typeName?: string, label = OPTIONAL) => ({
  name,
  number,
  type,
  label,
  jsonName: name.replace(/_(\w)/g, (_m, c: string) => c.toUpperCase()),
  ...(typeName ? { typeName } : {}),
});

/** The nested entry message of a map field. */
export const mapEntry = (name: string, keyType: number, value: { type: number; typeName?: string }) => ({
  name,
  field: [field("key", 1, keyType), field("value", 2, value.type, value.typeName)],
  options: { mapEntry: true },
});

/** The well-known types a test's file may use. */
const wellKnown: Record<string, DescFile> = {
  "google/protobuf/timestamp.proto": file_google_protobuf_timestamp,
  "google/protobuf/duration.proto": file_google_protobuf_duration,
  "google/protobuf/wrappers.proto": file_google_protobuf_wrappers,
  "google/protobuf/struct.proto": file_google_protobuf_struct,
};

/**
 * The message `typeName` of a proto3 file built from `file` (which may use google.protobuf.Timestamp, Duration, the
 * wrappers and Struct): request shapes no Gatehouse RPC has yet, for the checks that must hold for any request.
 */
export function messageOf(file: MessageInitShape<typeof FileDescriptorProtoSchema>, typeName: string): DescMessage {
  const registry = createFileRegistry(
    create(FileDescriptorProtoSchema, { syntax: "proto3", dependency: Object.keys(wellKnown), ...file }),
    (name) => wellKnown[name],
  );
  return registry.getMessage(typeName) as DescMessage;
}
