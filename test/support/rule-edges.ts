import { create, type DescField, type DescMessage, getOption, isFieldSet, type Message, ScalarType } from "@bufbuild/protobuf";
import { isWrapperDesc } from "@bufbuild/protobuf/wkt";
import { field as fieldRulesOf, type FieldRules, oneof as oneofRulesOf, RepeatedRulesSchema, StringRulesSchema } from "@bufbuild/protovalidate/gen/buf/validate/validate_pb.js";

/**
 * Random messages of any type whose values sit on the edges of its buf.validate rules: texts of exactly min_len and
 * max_len code points and one off each way (astral characters and lone surrogates included, so code points and UTF-16
 * units differ), numbers at and past `lte`, enum numbers defined and not, lists at and past their item bounds, required
 * messages and oneofs set or not. Seeded, so every run makes the same messages.
 */
export function ruleEdgeMessages(desc: DescMessage, count: number, seed: number): Message[] {
  const random = seeded(seed);
  return Array.from({ length: count }, () => {
    // A third within every rule, a third with now and then one value past its rule, a third anywhere on the edges.
    const outside = pick(random, [0, 0.05, 1]);
    return messageFor(desc, { random, outside: () => random() < outside }, 0);
  });
}

interface Draw {
  random: Random;
  /** Whether the next value goes past its rule (otherwise it stays within). */
  outside(): boolean;
}

type Random = () => number;

function seeded(seed: number): Random {
  let state = seed | 0;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const pick = <T>(random: Random, items: readonly T[]): T => items[Math.floor(random() * items.length)]!;

/** One code point each; the astral one is two UTF-16 units, the lone surrogate one unit but still one code point. */
const CHARACTERS = ["a", "Z", " ", "é", "\u{1F600}", "\u{10FFFF}", "\ud800"];

function text(random: Random, codePoints: number): string {
  let out = "";
  for (let i = 0; i < codePoints; i++) out += pick(random, CHARACTERS);
  // A lone high surrogate before an astral character's would pair with nothing else: keep each a code point of its own.
  return out.replace(/\ud800(?=[\udc00-\udfff])/g, "b");
}

/** A count on the edges of [min, max] (no max: up to `cap`) and a few in between: within, or past one end. */
function edgeCount(draw: Draw, min: number, max: number | undefined, cap: number): number {
  const top = max ?? cap;
  const edges = [0, 1, 2, min - 1, min, min + 1, top - 1, top, top + 1].filter((n) => n >= 0);
  const outside = draw.outside();
  const chosen = edges.filter((n) => (n < min || n > top) === outside);
  return pick(draw.random, chosen.length > 0 ? chosen : edges);
}

function rulesOf(field: DescField, items = false): FieldRules | undefined {
  const rules = getOption(field, fieldRulesOf);
  if (!items) return rules;
  return rules.type.case === "repeated" ? rules.type.value.items : undefined;
}

function scalarFor(field: DescField, rules: FieldRules | undefined, draw: Draw): unknown {
  const random = draw.random;
  const type = rules?.type;
  if (type?.case === "string") {
    const min = isFieldSet(type.value, StringRulesSchema.field.minLen) ? Number(type.value.minLen) : 0;
    const max = isFieldSet(type.value, StringRulesSchema.field.maxLen) ? Number(type.value.maxLen) : undefined;
    return text(random, edgeCount(draw, min, max, 8));
  }
  if (type?.case === "uint32" && type.value.lessThan.case === "lte") {
    const lte = type.value.lessThan.value;
    return draw.outside() ? pick(random, [lte + 1, 4294967295]) : pick(random, [0, 1, lte - 1, lte].filter((n) => n >= 0));
  }
  if (field.enum) {
    const numbers = field.enum.values.map((value) => value.number);
    return draw.outside() ? pick(random, [Math.max(...numbers) + 1, -1]) : pick(random, numbers);
  }
  switch (field.scalar) {
    case ScalarType.STRING:
      return text(random, pick(random, [0, 1, 3]));
    case ScalarType.BOOL:
      return random() < 0.5;
    case ScalarType.BYTES:
      return new Uint8Array(pick(random, [0, 2]));
    case ScalarType.INT64:
    case ScalarType.UINT64:
    case ScalarType.SINT64:
    case ScalarType.FIXED64:
    case ScalarType.SFIXED64:
      return pick(random, [0n, 1n, 42n]);
    default:
      return pick(random, [0, 1, 7]);
  }
}

/** A wrapper's plain value (protobuf-es unboxes a singular wrapper outside a oneof). */
function wrappedValue(type: DescMessage, draw: Draw): unknown {
  return scalarFor(type.fields[0]!, undefined, draw);
}

function valueFor(field: DescField, draw: Draw, depth: number): unknown {
  const random = draw.random;
  switch (field.fieldKind) {
    case "scalar":
    case "enum":
      return scalarFor(field, rulesOf(field), draw);
    case "message":
      return isWrapperDesc(field.message) && !field.oneof ? wrappedValue(field.message, draw) : messageFor(field.message, draw, depth + 1);
    case "list": {
      const repeated = getOption(field, fieldRulesOf).type;
      const rules = repeated.case === "repeated" ? repeated.value : undefined;
      const min = rules && isFieldSet(rules, RepeatedRulesSchema.field.minItems) ? Number(rules.minItems) : 0;
      const max = rules && isFieldSet(rules, RepeatedRulesSchema.field.maxItems) ? Number(rules.maxItems) : undefined;
      const length = edgeCount(draw, min, max, 3);
      // Long lists (a batch of a thousand users): a few random items, the rest empty ones.
      return Array.from({ length }, (_, index) =>
        field.listKind === "message"
          ? index < 3
            ? messageFor(field.message, draw, depth + 1)
            : create(field.message)
          : scalarFor(field, rulesOf(field, true), draw),
      );
    }
    case "map": {
      const entries: Record<string, unknown> = {};
      for (let i = pick(random, [0, 1, 2]); i > 0; i--) {
        const key = field.mapKey === ScalarType.STRING ? text(random, 2) : String(i);
        entries[key] = field.mapKind === "message" ? messageFor(field.message, draw, depth + 1) : field.mapKind === "enum" ? 0 : scalarFor(field, undefined, draw);
      }
      return entries;
    }
  }
}

/**
 * Whether a field or oneof is left unset: a required one only when this value goes past its rule; a scalar with rules
 * never (its value is drawn on their edges, the empty text included).
 */
function leftOut(draw: Draw, required: boolean, ruled = false): boolean {
  if (ruled) return false;
  return required ? draw.outside() : draw.random() < 0.25;
}

function messageFor(desc: DescMessage, draw: Draw, depth: number): Message {
  const message = create(desc) as unknown as Record<string, unknown>;
  for (const member of desc.members) {
    if (member.kind === "oneof") {
      if (depth > 3 || leftOut(draw, getOption(member, oneofRulesOf).required)) continue;
      const field = pick(draw.random, member.fields);
      message[member.localName] = { case: field.localName, value: valueFor(field, draw, depth) };
      continue;
    }
    // Nested messages stop at a depth, so a recursive type ends.
    const rules = rulesOf(member);
    const ruledScalar = (member.fieldKind === "scalar" || member.fieldKind === "enum") && rules?.type.case !== undefined;
    if ((member.fieldKind === "message" && depth > 3) || leftOut(draw, rules?.required ?? false, ruledScalar)) continue;
    message[member.localName] = valueFor(member, draw, depth);
  }
  return message as unknown as Message;
}
