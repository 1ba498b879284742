import { fromBinary } from "@bufbuild/protobuf";
import { type DescriptorProto, type FileDescriptorProto, FileDescriptorSetSchema } from "@bufbuild/protobuf/wkt";
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("..", import.meta.url));

// Field numbers in descriptor.proto, as used by source_code_info paths.
const FILE_MESSAGE = 4, FILE_ENUM = 5, FILE_SERVICE = 6, MESSAGE_FIELD = 2, MESSAGE_NESTED = 3, MESSAGE_ENUM = 4, SERVICE_METHOD = 2;

/** Every service, rpc, field and enum of a file, with whether it has a leading comment. */
function documentedElements(file: FileDescriptorProto): { name: string; documented: boolean }[] {
  const commented = new Set(
    (file.sourceCodeInfo?.location ?? []).filter((l) => (l.leadingComments ?? "").trim() !== "").map((l) => l.path.join(".")),
  );
  const out: { name: string; documented: boolean }[] = [];
  const add = (name: string, path: number[]) => out.push({ name, documented: commented.has(path.join(".")) });
  const message = (m: DescriptorProto, path: number[], prefix: string) => {
    m.field.forEach((f, i) => add(`${prefix}${m.name}.${f.name}`, [...path, MESSAGE_FIELD, i]));
    m.nestedType.forEach((n, i) => message(n, [...path, MESSAGE_NESTED, i], `${prefix}${m.name}.`));
    m.enumType.forEach((e, i) => add(`${prefix}${m.name}.${e.name}`, [...path, MESSAGE_ENUM, i]));
  };
  file.messageType.forEach((m, i) => message(m, [FILE_MESSAGE, i], ""));
  // Enum values may speak for themselves (GENDER_FEMALE); the enum itself must be documented.
  file.enumType.forEach((e, i) => add(e.name, [FILE_ENUM, i]));
  file.service.forEach((s, i) => {
    add(s.name, [FILE_SERVICE, i]);
    s.method.forEach((m, j) => add(`${s.name}.${m.name}`, [FILE_SERVICE, i, SERVICE_METHOD, j]));
  });
  return out;
}

describe("the API documentation lives in the .proto files", () => {
  it("documents every service, rpc, field and enum of gatehouse.admin.v1", () => {
    const image = execFileSync(join(root, "node_modules/.bin/buf"), ["build", "--as-file-descriptor-set", "-o", "-#format=binpb", "--path", "proto/gatehouse"], {
      cwd: root,
      maxBuffer: 64 * 1024 * 1024,
    });
    const files = fromBinary(FileDescriptorSetSchema, image).file.filter((f) => f.name.startsWith("gatehouse/"));
    expect(files.length).toBeGreaterThanOrEqual(9);
    const undocumented = files.flatMap((f) => documentedElements(f).filter((e) => !e.documented).map((e) => `${f.name}: ${e.name}`));
    expect(undocumented).toEqual([]);
  });
});
