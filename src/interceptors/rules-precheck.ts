import { type DescField, type DescMessage, type DescOneof, getOption, isFieldSet, type Message, ScalarType } from "@bufbuild/protobuf";
import { FeatureSet_FieldPresence } from "@bufbuild/protobuf/wkt";
import {
  EnumRulesSchema,
  field as fieldRulesOf,
  type FieldRules,
  FieldRulesSchema,
  Ignore,
  message as messageRulesOf,
  MessageRulesSchema,
  oneof as oneofRulesOf,
  OneofRulesSchema,
  RepeatedRulesSchema,
  StringRulesSchema,
  UInt32RulesSchema,
} from "@bufbuild/protovalidate/gen/buf/validate/validate_pb.js";

/**
 * A quick pass over a request's buf.validate rules that only says "valid": true when protovalidate would find no
 * violation in the message, false when it might. protovalidate stays the judge of every message this pass does not
 * clear, so every violation, its text, rule id, path and order, is still protovalidate's own.
 *
 * Why: protovalidate reads a message through reflection and builds a field path for every field it evaluates, whether
 * or not anything is wrong: about 7 µs and 6 KB of garbage per imported user, paid on every request. Almost every
 * request is valid. This pass reads the decoded message's own properties with checks made once per type.
 *
 * It reads only the rules the .proto files use today — string min_len / max_len, uint32 lte, enum defined_only,
 * repeated min_items / max_items / items, required on a message field, a required oneof — and the messages they nest.
 * A type with any other rule (uri, CEL, message rules…) or a recursive one has no pass: protovalidate judges all of its
 * messages. Where protovalidate would skip a rule (an `ignore` that is not IGNORE_ALWAYS on the items of a list), this
 * pass still applies it: a stricter answer costs only protovalidate's run, a laxer one would let a bad request through.
 */
export type RulesPrecheck = (message: Message) => boolean;

type Fields = Record<string, unknown>;
type Check = (message: Fields) => boolean;
type ValueCheck = (value: unknown) => boolean;

/** A rule this pass does not read: its type is left to protovalidate. Nothing shows it, so it says nothing more. */
class NotRead extends Error {}

/** Whether no field of `rules` (a rules message of type `schema`) is set but those named: every other rule is unread. */
function onlyThese(rules: Message, schema: DescMessage, read: readonly string[]): boolean {
  if ((rules as { $unknown?: unknown[] }).$unknown?.length) return false;
  return schema.fields.every((field) => read.includes(field.localName) || !isFieldSet(rules, field));
}

function require(read: boolean): void {
  if (!read) throw new NotRead();
}

/** The number of code points, as protovalidate counts a text's length (a lone surrogate is one). */
function codePoints(text: string): number {
  let count = 0;
  for (const _ of text) count++;
  return count;
}

/** The check of one value (a field's, or a list item's) by the scalar or enum rules of `rules`; undefined: none. */
function valueCheck(rules: FieldRules | undefined, field: DescField): ValueCheck | undefined {
  if (!rules) return undefined;
  const type = rules.type;
  switch (type.case) {
    case undefined:
      return undefined;
    case "string": {
      require(field.scalar === ScalarType.STRING && onlyThese(type.value, StringRulesSchema, ["minLen", "maxLen"]));
      const min = isFieldSet(type.value, StringRulesSchema.field.minLen) ? Number(type.value.minLen) : 0;
      const max = isFieldSet(type.value, StringRulesSchema.field.maxLen) ? Number(type.value.maxLen) : Infinity;
      return (value) => {
        const length = codePoints(value as string);
        return length >= min && length <= max;
      };
    }
    case "uint32": {
      const lte = type.value.lessThan;
      require(field.scalar === ScalarType.UINT32 && lte.case === "lte" && onlyThese(type.value, UInt32RulesSchema, ["lte"]));
      return (value) => (value as number) <= (lte.value as number);
    }
    case "enum": {
      require(field.enum !== undefined && onlyThese(type.value, EnumRulesSchema, ["definedOnly"]));
      if (!type.value.definedOnly) return undefined;
      const defined = new Set(field.enum!.values.map((value) => value.number));
      return (value) => defined.has(value as number);
    }
    // Unreachable: the field's and the items' rules admit no other type (onlyThese in fieldCheck and listCheck).
    // Stryker disable next-line all: as above
    default:
      throw new NotRead();
  }
}

/** A field's value as protobuf-es holds it: a oneof's member inside its group; undefined when not sent. */
function readerOf(field: DescField): (message: Fields) => unknown {
  const oneof = field.oneof;
  if (!oneof) return (message) => message[field.localName];
  return (message) => {
    const group = message[oneof.localName] as { case: string | undefined; value?: unknown };
    return group.case === field.localName ? group.value : undefined;
  };
}

function listCheck(field: DescField & { fieldKind: "list" }, rules: FieldRules): Check | undefined {
  const type = rules.type;
  require(type.case === undefined || type.case === "repeated");
  // Stryker disable next-line ConditionalExpression: with no rules of its type set, `type.value` is undefined anyway
  const repeated = type.case === "repeated" ? type.value : undefined;
  require(!repeated || onlyThese(repeated, RepeatedRulesSchema, ["minItems", "maxItems", "items"]));
  const minItems = repeated && isFieldSet(repeated, RepeatedRulesSchema.field.minItems) ? Number(repeated.minItems) : 0;
  const maxItems = repeated && isFieldSet(repeated, RepeatedRulesSchema.field.maxItems) ? Number(repeated.maxItems) : Infinity;
  const items = repeated?.items;
  require(!items || onlyThese(items, FieldRulesSchema, ["ignore", "string", "uint32", "enum"]));
  let itemCheck: ((item: unknown) => boolean) | undefined;
  // IGNORE_ALWAYS: protovalidate skips the items (a handler checks each one itself, see validation.ts).
  if (items?.ignore !== Ignore.ALWAYS) {
    if (field.listKind !== "message") itemCheck = valueCheck(items, field);
    else {
      require(!items?.type.case);
      itemCheck = checksOf(field.message) as ((item: unknown) => boolean) | undefined;
    }
  }
  return (message) => {
    const list = message[field.localName] as unknown[];
    if (list.length < minItems || list.length > maxItems) return false;
    if (itemCheck) for (const item of list) if (!itemCheck(item)) return false;
    return true;
  };
}

/** The check of one field, or undefined when nothing about it can be wrong. */
function fieldCheck(field: DescField): Check | undefined {
  const rules = getOption(field, fieldRulesOf);
  require(onlyThese(rules, FieldRulesSchema, ["required", "ignore", "string", "uint32", "enum", "repeated"]));
  require(field.presence !== FeatureSet_FieldPresence.LEGACY_REQUIRED);
  const read = readerOf(field);
  switch (field.fieldKind) {
    case "scalar":
    case "enum": {
      require(!rules.required);
      const check = valueCheck(rules, field);
      if (!check) return undefined;
      // An unset field with explicit presence (optional, a oneof's other member) has no value to judge.
      return (message) => {
        const value = read(message);
        return value === undefined || check(value);
      };
    }
    case "message": {
      require(!rules.type.case);
      // A wrapper's own field has no rules, so a singular wrapper, which protobuf-es holds as its plain value, gets no
      // nested check (nothing is read of the plain value).
      const nested = checksOf(field.message);
      const required = rules.required && rules.ignore !== Ignore.ALWAYS;
      if (!nested && !required) return undefined;
      return (message) => {
        const value = read(message);
        if (value === undefined) return !required;
        return !nested || nested(value as Fields);
      };
    }
    case "list":
      require(!rules.required);
      return listCheck(field, rules);
    case "map": {
      // Stryker disable next-line ArrayDeclaration: no FieldRules field has the name Stryker puts in the list
      require(onlyThese(rules, FieldRulesSchema, []));
      const nested = field.mapKind === "message" ? checksOf(field.message) : undefined;
      if (!nested) return undefined;
      return (message) => Object.values(message[field.localName] as Fields).every((value) => nested(value as Fields));
    }
  }
}

function oneofCheck(oneof: DescOneof): Check | undefined {
  const rules = getOption(oneof, oneofRulesOf);
  require(onlyThese(rules, OneofRulesSchema, ["required"]));
  if (!rules.required) return undefined;
  return (message) => (message[oneof.localName] as { case: string | undefined }).case !== undefined;
}

/** The types whose checks are being made (making is synchronous): one met again is recursive. */
const building = new Set<DescMessage>();

/** The checks of a type, undefined when it has none; throws NotRead for a type this pass leaves to protovalidate. */
function checksOf(desc: DescMessage): Check | undefined {
  const known = made.get(desc);
  // Stryker disable next-line ConditionalExpression,BlockStatement: making a type's checks again gives the same ones (only slower)
  if (known !== undefined) {
    if (known === NOT_READ) throw new NotRead();
    return known ?? undefined;
  }
  require(!building.has(desc));
  building.add(desc);
  try {
    // Stryker disable next-line ArrayDeclaration: no MessageRules field has the name Stryker puts in the list
    require(onlyThese(getOption(desc, messageRulesOf), MessageRulesSchema, []));
    const checks = [...desc.fields.map(fieldCheck), ...desc.oneofs.map(oneofCheck)].filter((check) => check !== undefined);
    // Stryker disable next-line ConditionalExpression: no checks and a check of none (every() of nothing) both clear every message
    const all: Check | undefined = checks.length === 0 ? undefined : (message) => checks.every((check) => check(message));
    made.set(desc, all ?? null);
    return all;
  } catch (error) {
    // Keeping the failure only saves making the type again, which fails the same way (any other error is a fault that
    // stops the server's start).
    // Stryker disable next-line ConditionalExpression: as above
    if (error instanceof NotRead) made.set(desc, NOT_READ);
    throw error;
  } finally {
    building.delete(desc);
  }
}

const NOT_READ = Symbol("not read");
// Made once per type and kept: a descriptor never changes. null: nothing to check.
const made = new WeakMap<DescMessage, Check | null | typeof NOT_READ>();

/** The precheck of `desc`'s messages, or undefined when protovalidate must judge each of them. Made once per type. */
export function rulesPrecheckOf(desc: DescMessage): RulesPrecheck | undefined {
  let precheck = prechecks.get(desc);
  // Stryker disable next-line ConditionalExpression: making it again gives the same precheck (only slower)
  if (precheck === undefined) {
    precheck = makePrecheck(desc);
    prechecks.set(desc, precheck);
  }
  return precheck ?? undefined;
}
const prechecks = new WeakMap<DescMessage, RulesPrecheck | null>();

function makePrecheck(desc: DescMessage): RulesPrecheck | null {
  try {
    const checks = checksOf(desc);
    return checks ? (message) => checks(message as unknown as Fields) : () => true;
  } catch (error) {
    // Stryker disable next-line ConditionalExpression: any other error is a fault in this file, not a shape of request; returning null for it too leaves that type to protovalidate
    if (error instanceof NotRead) return null;
    throw error;
  }
}
