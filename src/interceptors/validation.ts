import { type DescField, type DescMessage, type DescService, getOption, type Message, ScalarType } from "@bufbuild/protobuf";
import { pathToString } from "@bufbuild/protobuf/reflect";
import { isWrapperDesc } from "@bufbuild/protobuf/wkt";
import { createValidator } from "@bufbuild/protovalidate";
import { field as fieldRules, Ignore } from "@bufbuild/protovalidate/gen/buf/validate/validate_pb.js";
import type { Interceptor } from "@connectrpc/connect";
import { type FieldViolation, invalidArgument } from "../domain/errors.js";
import { rulesPrecheckOf } from "./rules-precheck.js";

/**
 * Names whose surrounding white space is not part of the value (API.md, "Input"). They are
 * trimmed here, by name and wherever they occur in a request, because the buf.validate rules of
 * the .proto (min_len, max_len) run in this interceptor before any handler: trimming later would
 * let "   " pass `min_len: 1` and count spaces against `max_len`. Matching by name gives every RPC
 * that takes such a field, now or later, the same treatment without a list of RPCs to keep.
 */
export const TRIMMED_FIELD_NAMES: ReadonlySet<string> = new Set(["user_name", "first_name", "last_name", "nick_name", "display_name"]);

/**
 * The ranges of google.protobuf.Timestamp (0001-01-01T00:00:00Z to 9999-12-31T23:59:59.999999999Z)
 * and Duration (±10 000 years) as their own definitions state. The binary decoder accepts any
 * int64/int32, and a value outside them breaks every later use (`new Date` becomes Invalid Date),
 * so they are refused here, generically for every RPC, instead of being normalised.
 */
const TIMESTAMP_SECONDS = { min: -62_135_596_800n, max: 253_402_300_799n };
const DURATION_SECONDS = { min: -315_576_000_000n, max: 315_576_000_000n };
const MAX_NANOS = 999_999_999;

function timeViolation(desc: DescMessage, value: Message, field: string): FieldViolation | undefined {
  const { seconds, nanos } = value as Message & { seconds: bigint; nanos: number };
  if (desc.typeName === "google.protobuf.Timestamp") {
    if (seconds >= TIMESTAMP_SECONDS.min && seconds <= TIMESTAMP_SECONDS.max && nanos >= 0 && nanos <= MAX_NANOS) return undefined;
    return {
      field,
      description: "must be a timestamp from 0001-01-01T00:00:00Z to 9999-12-31T23:59:59.999999999Z, with nanos from 0 to 999999999",
      rule: "timestamp.range",
    };
  }
  const sameSign = (seconds >= 0n && nanos >= 0) || (seconds <= 0n && nanos <= 0);
  if (seconds >= DURATION_SECONDS.min && seconds <= DURATION_SECONDS.max && Math.abs(nanos) <= MAX_NANOS && sameSign) return undefined;
  return { field, description: "must be a duration of at most ±315576000000 seconds, with nanos of the same sign below 10⁹", rule: "duration.range" };
}

/**
 * U+0000 (NUL) is refused in every text of a request: it means nothing in a name, an address or a URL, it ends C
 * strings in the tools that read logs and exports, and PostgreSQL's text cannot hold it (a request with one would
 * fail in the store instead of being answered as the caller's mistake).
 */
function checkNoNul(value: string, field: string, violations: FieldViolation[]): void {
  if (value.includes("\u0000")) violations.push({ field, description: "must not contain the character U+0000 (NUL)", rule: "string.no_nul" });
}

const isTime = (desc: DescMessage) => desc.typeName === "google.protobuf.Timestamp" || desc.typeName === "google.protobuf.Duration";

/**
 * A list whose items the .proto leaves to the handler (`repeated.items.ignore = IGNORE_ALWAYS`): each item is checked
 * on its own there (`checkMessage`), so one bad item is that item's result (a bulk import's user), not the refusal of
 * the whole message. protovalidate skips such items; so does the walk below.
 */
function itemsLeftToHandler(field: DescField): boolean {
  let left = leftToHandler.get(field);
  // Stryker disable next-line ConditionalExpression,BlockStatement: kept for the process, and the test runner shares one module graph, so an earlier test filled it before a mutant here is active; the rule is test/api/import-human-users.test.ts's "creates the good users and answers each bad one"
  if (left === undefined) {
    const rules = getOption(field, fieldRules).type;
    // Stryker disable next-line ConditionalExpression,StringLiteral,EqualityOperator: as above (filled before any mutant is active)
    left = rules.case === "repeated" && rules.value.items?.ignore === Ignore.ALWAYS;
    leftToHandler.set(field, left);
  }
  return left;
}
// Read once per field: the options of a descriptor never change.
const leftToHandler = new WeakMap<DescField, boolean>();

/**
 * What the walk does with one field of a message type, decided once per type. A request's fields are read as the
 * properties of the decoded message (protobuf-es's plain objects), not through reflection, which made a wrapper with
 * its own maps for every nested message of every request: for a bulk import's user, 2.7 KB of garbage and about three
 * times the time of this walk.
 */
type Step =
  | { kind: "text"; field: DescField; trimmed: boolean }
  | { kind: "message"; field: DescField; type: DescMessage }
  /**
   * A singular wrapper (google.protobuf.StringValue, Int32Value…), which protobuf-es holds as its plain value: walked as
   * the message it stands for (a StringValue's text is `<field>.value`, named in the order of the message fields).
   */
  | { kind: "wrapped"; field: DescField; type: DescMessage }
  /** A list of messages (`type`), or of texts. */
  | { kind: "list"; field: DescField; type: DescMessage | undefined }
  /** A map: its keys are checked when they are texts; its values when they are messages (`type`) or texts. */
  | { kind: "map"; field: DescField; textKeys: boolean; textValues: boolean; type: DescMessage | undefined };

/**
 * protobuf-es holds a google.protobuf.Struct as a plain JSON object wherever it is used (singular, in a oneof, a list or
 * a map), except inside google.protobuf.Value: a shape this walk does not read yet. No request type has one; one that
 * gets one fails when the server starts (createValidationInterceptor makes every request type's steps), not on a call.
 */
function refuseStruct(field: DescField): void {
  const type = "message" in field ? field.message : undefined;
  if (type?.typeName === "google.protobuf.Struct" && field.parent.typeName !== "google.protobuf.Value") {
    throw new Error(`${field.parent.typeName}.${field.name}: a google.protobuf.Struct in a request is not walked yet (see validation.ts)`);
  }
}

/** The step of one field, or none when nothing it can hold is looked at (numbers, enums, bytes, booleans). */
function stepOf(field: DescField): Step | undefined {
  refuseStruct(field);
  switch (field.fieldKind) {
    case "scalar":
      return field.scalar === ScalarType.STRING ? { kind: "text", field, trimmed: TRIMMED_FIELD_NAMES.has(field.name) } : undefined;
    case "message":
      // protobuf-es holds a wrapper in a singular field outside a oneof as its plain value (reflect.ts unboxes it so).
      return { kind: isWrapperDesc(field.message) && !field.oneof ? "wrapped" : "message", field, type: field.message };
    case "list":
      if (itemsLeftToHandler(field)) return undefined;
      if (field.listKind === "message") return { kind: "list", field, type: field.message };
      return field.scalar === ScalarType.STRING ? { kind: "list", field, type: undefined } : undefined;
    case "map":
      return {
        kind: "map",
        field,
        textKeys: field.mapKey === ScalarType.STRING,
        // (The mapKind tests below narrow the type: a map of another kind has no `scalar`, or no `message`, at all, so
        // their `true` mutants are equivalent.)
        // Stryker disable next-line ConditionalExpression: as above
        textValues: field.mapKind === "scalar" && field.scalar === ScalarType.STRING,
        // Stryker disable next-line ConditionalExpression: as above
        type: field.mapKind === "message" ? field.message : undefined,
      };
  }
}

/** The steps of a message type, made on its first request and kept: a descriptor never changes. */
function stepsOf(desc: DescMessage): Step[] {
  let steps = stepsByType.get(desc);
  // Stryker disable next-line ConditionalExpression: making the steps again on every request changes only the speed
  if (steps === undefined) {
    steps = desc.fields.flatMap((field) => stepOf(field) ?? []);
    stepsByType.set(desc, steps);
  }
  return steps;
}
const stepsByType = new WeakMap<DescMessage, Step[]>();

/**
 * Makes the steps of `desc` and of every message type it holds, the items a handler walks itself included: a type the
 * walk cannot handle fails here, when the server starts, not on a call.
 */
export function prepareRequestWalk(desc: DescMessage, seen = new Set<DescMessage>()): void {
  if (seen.has(desc)) return;
  seen.add(desc);
  stepsOf(desc);
  for (const field of desc.fields) if ("message" in field && field.message) prepareRequestWalk(field.message, seen);
}

type Fields = Record<string, unknown>;

/**
 * A field's value as protobuf-es holds it (a oneof's member inside its group), or undefined when the caller did not
 * send it. A field with explicit presence the caller left out has its default on the message's prototype (proto2,
 * editions), which is no value the caller sent; every other field is the message's own property.
 */
function valueOf(message: Fields, field: DescField): unknown {
  if (!field.oneof) return Object.hasOwn(message, field.localName) ? message[field.localName] : undefined;
  const group = message[field.oneof.localName] as { case: string | undefined; value?: unknown };
  return group.case === field.localName ? group.value : undefined;
}

/** The text of a trimmed field without its surrounding white space, which is also what the message holds from now on. */
function trimInPlace(message: Fields, field: DescField, value: string): string {
  const trimmed = value.trim();
  if (field.oneof) (message[field.oneof.localName] as { value: unknown }).value = trimmed;
  else message[field.localName] = trimmed;
  return trimmed;
}

/**
 * Walks a decoded request — nested messages, lists and map values, iteratively so no nesting depth can exhaust the
 * stack — trimming the fields of TRIMMED_FIELD_NAMES in place and collecting a violation for every Timestamp or
 * Duration out of range and every text holding U+0000, with its path as the caller wrote it (`tokens[2].expiration_date`,
 * `labels["a"]`).
 */
export function normalizeRequest(desc: DescMessage, message: Message): FieldViolation[] {
  const violations: FieldViolation[] = [];
  const pending: { type: DescMessage; message: Fields; path: string }[] = [{ type: desc, message: message as unknown as Fields, path: "" }];
  const visit = (type: DescMessage, value: Fields, path: string) => {
    if (!isTime(type)) pending.push({ type, message: value, path: `${path}.` });
    else {
      const violation = timeViolation(type, value as unknown as Message, path);
      if (violation) violations.push(violation);
    }
  };
  for (let next = pending.pop(); next; next = pending.pop()) {
    const current = next.message;
    for (const step of stepsOf(next.type)) {
      const value = valueOf(current, step.field);
      // Unset: undefined (a message, a oneof's other member, an optional scalar). An empty text has nothing to check
      // (skipped only to save the work, so its mutants are equivalent).
      // Stryker disable next-line ConditionalExpression,StringLiteral: as above
      if (value === undefined || value === "") continue;
      const path = next.path + step.field.name;
      switch (step.kind) {
        case "text":
          checkNoNul(step.trimmed ? trimInPlace(current, step.field, value as string) : (value as string), path, violations);
          break;
        case "wrapped":
          visit(step.type, { value }, path);
          break;
        case "message":
          visit(step.type, value as Fields, path);
          break;
        case "list":
          for (const [index, item] of (value as unknown[]).entries()) {
            const itemPath = `${path}[${index}]`;
            if (step.type) visit(step.type, item as Fields, itemPath);
            else checkNoNul(item as string, itemPath, violations);
          }
          break;
        case "map":
          for (const [key, entry] of Object.entries(value as Fields)) {
            const entryPath = `${path}[${step.textKeys ? JSON.stringify(key) : key}]`;
            if (step.textKeys) checkNoNul(key, entryPath, violations);
            if (step.type) visit(step.type, entry as Fields, entryPath);
            else if (step.textValues) checkNoNul(entry as string, entryPath, violations);
          }
          break;
      }
    }
  }
  return violations;
}

/** The error of a request (or an item of one) that breaks rules of its .proto: one field violation per broken rule. */
export function invalidRequest(violations: FieldViolation[]) {
  return invalidArgument("request.invalid", `invalid request: ${violations.map((v) => `${v.field}: ${v.description}`).join("; ")}`, violations);
}

function refuse(violations: FieldViolation[]): never {
  throw invalidRequest(violations);
}

const validator = createValidator();

/**
 * What this interceptor checks of a request, for one message: first the normalisation above (trimming in place;
 * Timestamps and Durations out of range and U+0000 are violations, and the rules are not run then), then the
 * buf.validate rules of its .proto: a message the quick precheck clears (rules-precheck.ts) is valid; protovalidate
 * judges every other one. The violations, none when the message is valid. For handlers that check the items of a
 * message themselves (see itemsLeftToHandler).
 */
export function checkMessage(desc: DescMessage, message: Message): FieldViolation[] {
  const outOfRange = normalizeRequest(desc, message);
  // Refused before the rules run: CEL rules on an out-of-range Timestamp would fail, not answer.
  if (outOfRange.length > 0) return outOfRange;
  if (rulesPrecheckOf(desc)?.(message)) return [];
  const result = validator.validate(desc, message);
  if (result.kind === "error") throw result.error;
  return result.kind === "invalid" ? result.violations.map((violation) => ({ field: pathToString(violation.field), description: violation.message, rule: violation.ruleId })) : [];
}

/**
 * Checks every request message — the one of a unary call, each one of a stream — before the
 * handler sees it: first the normalisation above, then the buf.validate rules of its .proto. Each
 * broken rule becomes one field violation with the field's path (`profile.first_name`,
 * `idps[1].config_id`); the validator collects all of them, not just the first. The walk's steps of every request
 * type of `services` are made here, so a type it cannot walk stops the server's start.
 */
export function createValidationInterceptor(services: readonly DescService[]): Interceptor {
  for (const service of services) {
    for (const method of service.methods) {
      prepareRequestWalk(method.input);
      rulesPrecheckOf(method.input);
    }
  }
  const check = (desc: DescMessage, message: Message) => {
    const violations = checkMessage(desc, message);
    if (violations.length > 0) refuse(violations);
  };
  return (next) => async (req) => {
    if (!req.stream) {
      check(req.method.input, req.message);
      return next(req);
    }
    const messages = req.message;
    return next({
      ...req,
      message: (async function* () {
        for await (const message of messages) {
          check(req.method.input, message);
          yield message;
        }
      })(),
    });
  };
}
