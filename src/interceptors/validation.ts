import { type DescField, type DescMessage, getOption, type Message, ScalarType } from "@bufbuild/protobuf";
import { pathToString, type ReflectMessage, reflect } from "@bufbuild/protobuf/reflect";
import { createValidator } from "@bufbuild/protovalidate";
import { field as fieldRules, Ignore } from "@bufbuild/protovalidate/gen/buf/validate/validate_pb.js";
import type { Interceptor } from "@connectrpc/connect";
import { type FieldViolation, invalidArgument } from "../domain/errors.js";

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

function timeViolation(value: ReflectMessage, field: string): FieldViolation | undefined {
  const { seconds, nanos } = value.message as Message & { seconds: bigint; nanos: number };
  if (value.desc.typeName === "google.protobuf.Timestamp") {
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
 * Walks a decoded request with reflection — nested messages, lists and map values, iteratively so
 * no nesting depth can exhaust the stack — trimming the fields of TRIMMED_FIELD_NAMES in place and
 * collecting a violation for every Timestamp or Duration out of range and every text holding U+0000, with its path
 * as the caller wrote it (`tokens[2].expiration_date`, `labels["a"]`).
 */
export function normalizeRequest(desc: DescMessage, message: Message): FieldViolation[] {
  const violations: FieldViolation[] = [];
  const pending: { message: ReflectMessage; path: string }[] = [{ message: reflect(desc, message), path: "" }];
  const visit = (value: ReflectMessage, path: string) => {
    if (!isTime(value.desc)) pending.push({ message: value, path: `${path}.` });
    else {
      const violation = timeViolation(value, path);
      if (violation) violations.push(violation);
    }
  };
  for (let next = pending.pop(); next; next = pending.pop()) {
    const current = next.message;
    for (const field of current.fields) {
      if (!current.isSet(field)) continue;
      const path = next.path + field.name;
      switch (field.fieldKind) {
        case "scalar":
          if (field.scalar === ScalarType.STRING) {
            if (TRIMMED_FIELD_NAMES.has(field.name)) current.set(field, (current.get(field) as string).trim());
            checkNoNul(current.get(field) as string, path, violations);
          }
          break;
        case "message":
          visit(current.get(field), path);
          break;
        case "list": {
          if (itemsLeftToHandler(field)) break;
          let index = 0;
          for (const item of current.get(field)) {
            const itemPath = `${path}[${index++}]`;
            if (field.listKind === "message") visit(item as ReflectMessage, itemPath);
            else if (typeof item === "string") checkNoNul(item, itemPath, violations);
          }
          break;
        }
        case "map":
          for (const [key, value] of current.get(field)) {
            const entryPath = `${path}[${typeof key === "string" ? JSON.stringify(key) : String(key)}]`;
            // Only text can hold a NUL: a number, a boolean or bytes written as text has none.
            checkNoNul(String(key), entryPath, violations);
            if (field.mapKind === "message") visit(value as ReflectMessage, entryPath);
            else checkNoNul(String(value), entryPath, violations);
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
 * buf.validate rules of its .proto. The violations, none when the message is valid. For handlers that check the
 * items of a message themselves (see itemsLeftToHandler).
 */
export function checkMessage(desc: DescMessage, message: Message): FieldViolation[] {
  const outOfRange = normalizeRequest(desc, message);
  // Refused before the rules run: CEL rules on an out-of-range Timestamp would fail, not answer.
  if (outOfRange.length > 0) return outOfRange;
  const result = validator.validate(desc, message);
  if (result.kind === "error") throw result.error;
  return result.kind === "invalid" ? result.violations.map((violation) => ({ field: pathToString(violation.field), description: violation.message, rule: violation.ruleId })) : [];
}

/**
 * Checks every request message — the one of a unary call, each one of a stream — before the
 * handler sees it: first the normalisation above, then the buf.validate rules of its .proto. Each
 * broken rule becomes one field violation with the field's path (`profile.first_name`,
 * `idps[1].config_id`); the validator collects all of them, not just the first.
 */
export function createValidationInterceptor(): Interceptor {
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
