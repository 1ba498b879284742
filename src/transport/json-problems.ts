import type { DescEnum, DescField, DescMessage, JsonValue } from "@bufbuild/protobuf";
import type { FieldViolation } from "../domain/errors.js";

/** protobuf-es's own JSON recursion limit; deeper input is the JSON reader's to refuse. */
const MAX_DEPTH = 100;
/** An error lists a few problems, each name cut short: a hostile body must not become a huge answer. */
const MAX_PROBLEMS = 10;
const MAX_NAME = 64;

const quoted = (name: string) => JSON.stringify(name.length > MAX_NAME ? `${name.slice(0, MAX_NAME)}…` : name);
const isObject = (json: JsonValue): json is { [key: string]: JsonValue } => typeof json === "object" && json !== null && !Array.isArray(json);

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
const isLeap = (year: number) => (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;

/**
 * protobuf-es reads RFC 3339 dates through `Date.parse`, which rolls an impossible day over
 * ("2026-02-30" becomes March 2nd). A caller who wrote an impossible date meant something else.
 */
function impossibleDate(value: string): boolean {
  const match = /^(\d{4})-(\d{2})-(\d{2})T/.exec(value);
  if (!match) return false; // not RFC 3339 at all: the JSON reader refuses it itself
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  if (month < 1 || month > 12) return false;
  const days = month === 2 && isLeap(year) ? 29 : DAYS_IN_MONTH[month - 1];
  return day < 1 || day > (days ?? 31);
}

function enumProblems(desc: DescEnum, json: JsonValue, path: string): FieldViolation[] {
  if (typeof json !== "string" || desc.typeName === "google.protobuf.NullValue") return [];
  if (desc.values.some((value) => value.name === json)) return [];
  return [{ field: path, description: `unknown value ${quoted(json)} of ${desc.name}`, rule: "json.unknown_enum_value" }];
}

function messageProblems(desc: DescMessage, json: JsonValue, path: string, depth: number): FieldViolation[] {
  if (desc.typeName === "google.protobuf.Timestamp") {
    return typeof json === "string" && impossibleDate(json) ? [{ field: path, description: `${quoted(json)} is not a calendar date`, rule: "json.timestamp_date" }] : [];
  }
  // The other well-known types have JSON forms of their own (Struct and Any take any key).
  if (desc.typeName.startsWith("google.protobuf.")) return [];
  return jsonProblems(desc, json, path, depth + 1);
}

function elementProblems(field: DescField, json: JsonValue, path: string, depth: number): FieldViolation[] {
  if (json === null) return [];
  if (field.fieldKind === "list" || field.fieldKind === "map") {
    if (field.enum) return enumProblems(field.enum, json, path);
    if (field.message) return messageProblems(field.message, json, path, depth);
    return [];
  }
  if (field.fieldKind === "enum") return enumProblems(field.enum, json, path);
  if (field.fieldKind === "message") return messageProblems(field.message, json, path, depth);
  return [];
}

function fieldProblems(field: DescField, json: JsonValue, path: string, depth: number): FieldViolation[] {
  if (field.fieldKind === "list" && Array.isArray(json)) return json.flatMap((item, i) => elementProblems(field, item, `${path}[${i}]`, depth));
  if (field.fieldKind === "map" && isObject(json)) return Object.entries(json).flatMap(([key, value]) => elementProblems(field, value, `${path}[${quoted(key)}]`, depth));
  return elementProblems(field, json, path, depth);
}

/**
 * What the proto3 JSON reader would pass over silently or bend: keys the message does not have,
 * enum names the enum does not have, Timestamps on days that do not exist. Each becomes a field
 * violation with the path as the caller wrote it. Shapes the reader refuses anyway (a string for
 * a message, a bad date format) are left to it.
 */
export function jsonProblems(desc: DescMessage, json: JsonValue, path = "", depth = 0): FieldViolation[] {
  if (depth > MAX_DEPTH || !isObject(json)) return [];
  const problems: FieldViolation[] = [];
  for (const [key, value] of Object.entries(json)) {
    if (problems.length >= MAX_PROBLEMS) break;
    const fieldPath = path ? `${path}.${key.slice(0, MAX_NAME)}` : key.slice(0, MAX_NAME);
    const field = desc.fields.find((f) => f.jsonName === key || f.name === key);
    if (!field) {
      problems.push({ field: fieldPath, description: `unknown field ${quoted(key)} of ${desc.name}`, rule: "json.unknown_field" });
      continue;
    }
    problems.push(...fieldProblems(field, value, fieldPath, depth));
  }
  return problems.slice(0, MAX_PROBLEMS);
}
