import type { DescEnum, DescField, DescMessage, JsonValue } from "@bufbuild/protobuf";
import type { FieldViolation } from "../domain/errors.js";

/** protobuf-es's own JSON recursion limit; deeper input is the JSON reader's to refuse. */
const MAX_DEPTH = 100;
/** An error lists a few problems, each name cut short: a hostile body must not become a huge answer. */
export const MAX_PROBLEMS = 10;
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

/**
 * The problems found so far. Walkers stop as soon as it is full, so a hostile list of a million
 * bad items costs ten violations, not a million (and paths are only built for what is reported).
 */
class Problems {
  readonly list: FieldViolation[] = [];
  get full(): boolean {
    return this.list.length >= MAX_PROBLEMS;
  }
  /** Walkers check `full` before each key or item, and each adds at most one problem for it. */
  add(path: Path, description: string, rule: string): void {
    this.list.push({ field: path(), description, rule });
  }
}

/** A field path, built only when a problem is reported. */
type Path = () => string;
const child = (path: Path, key: string): Path => () => {
  const parent = path();
  return parent ? `${parent}.${key.slice(0, MAX_NAME)}` : key.slice(0, MAX_NAME);
};

function checkEnum(desc: DescEnum, json: JsonValue, path: Path, out: Problems): void {
  // A number is a value too (proto3 enums are open); null is the field's default.
  if (typeof json !== "string" || desc.values.some((value) => value.name === json)) return;
  out.add(path, `unknown value ${quoted(json)} of ${desc.name}`, "json.unknown_enum_value");
}

function checkMessageValue(desc: DescMessage, json: JsonValue, path: Path, depth: number, out: Problems): void {
  if (desc.typeName === "google.protobuf.Timestamp") {
    if (typeof json === "string" && impossibleDate(json)) out.add(path, `${quoted(json)} is not a calendar date`, "json.timestamp_date");
    return;
  }
  // The other well-known types have JSON forms of their own (Struct and Any take any key).
  if (desc.typeName.startsWith("google.protobuf.")) return;
  checkObject(desc, json, path, depth + 1, out);
}

/** One value of a field (a list item or map value for repeated and map fields): its enum's or its message's. */
function checkElement(field: DescField, json: JsonValue, path: Path, depth: number, out: Problems): void {
  if (field.enum) checkEnum(field.enum, json, path, out);
  else if (field.message) checkMessageValue(field.message, json, path, depth, out);
}

function checkField(field: DescField, json: JsonValue, path: Path, depth: number, out: Problems): void {
  const hasElementChecks = field.enum !== undefined || field.message !== undefined;
  if (field.fieldKind === "list" && Array.isArray(json)) {
    // A list of scalars has nothing to check here: the JSON reader decodes it once, later.
    if (!hasElementChecks) return;
    for (const [i, item] of json.entries()) {
      if (out.full) return;
      checkElement(field, item, () => `${path()}[${i}]`, depth, out);
    }
    return;
  }
  if (field.fieldKind === "map" && isObject(json)) {
    if (!hasElementChecks) return;
    for (const key in json) {
      if (out.full) return;
      checkElement(field, json[key] as JsonValue, () => `${path()}[${quoted(key)}]`, depth, out);
    }
    return;
  }
  checkElement(field, json, path, depth, out);
}

function checkObject(desc: DescMessage, json: JsonValue, path: Path, depth: number, out: Problems): void {
  if (!isObject(json)) return;
  // Stryker disable next-line ConditionalExpression,EqualityOperator: no message of the API contains itself (four levels at most): a guard for one that will
  if (depth > MAX_DEPTH) return;
  // for…in, not Object.entries: a million keys are not copied into pairs before the first check.
  for (const key in json) {
    if (out.full) return;
    const fieldPath = child(path, key);
    const field = desc.fields.find((f) => f.jsonName === key || f.name === key);
    if (!field) out.add(fieldPath, `unknown field ${quoted(key)} of ${desc.name}`, "json.unknown_field");
    else checkField(field, json[key] as JsonValue, fieldPath, depth, out);
  }
}

/**
 * What the proto3 JSON reader would pass over silently or bend: keys the message does not have,
 * enum names the enum does not have, Timestamps on days that do not exist. Each becomes a field
 * violation with the path as the caller wrote it, at most MAX_PROBLEMS of them: the walk stops at
 * the cap. Shapes the reader refuses anyway (a string for a message, a bad date format) are left to it.
 */
export function jsonProblems(desc: DescMessage, json: JsonValue): FieldViolation[] {
  const out = new Problems();
  checkObject(desc, json, () => "", 0, out);
  return out.list;
}
