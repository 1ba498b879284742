import { type DescField, type DescMessage, fromJson, type JsonValue, ScalarType, toBinary } from "@bufbuild/protobuf";

/** A small seeded PRNG (mulberry32): the same seed gives the same inputs, so a failure reproduces. */
export class Rng {
  private state: number;
  constructor(seed: number) {
    this.state = seed >>> 0;
  }
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)] as T;
  }
  bytes(n: number): Uint8Array {
    return Uint8Array.from({ length: n }, () => this.int(256));
  }
}

const STRINGS = ["", "a", "admin", "x".repeat(201), "ü😀", "\u0000", " padded ", "<tag>", "' OR 1=1 --", "$2b$04$abcdefghijklmnopqrstuv", "+41791234567", "a@example.com", "2026-02-30"];

function randomString(rng: Rng): string {
  if (rng.chance(0.6)) return rng.pick(STRINGS);
  return Array.from({ length: rng.int(40) }, () => String.fromCharCode(32 + rng.int(95))).join("");
}

function randomScalar(rng: Rng, type: ScalarType): JsonValue {
  switch (type) {
    case ScalarType.STRING:
      return randomString(rng);
    case ScalarType.BOOL:
      return rng.chance(0.5);
    case ScalarType.BYTES:
      return Buffer.from(rng.bytes(rng.int(20))).toString("base64");
    case ScalarType.DOUBLE:
    case ScalarType.FLOAT:
      return rng.pick<JsonValue>([0, 1.5, -1e308, "NaN", "Infinity", 3.4e39]);
    case ScalarType.INT64:
    case ScalarType.SINT64:
    case ScalarType.SFIXED64:
      return rng.pick<JsonValue>(["0", "1", "-1", "9223372036854775807", "-9223372036854775808", String(rng.int(1e9))]);
    case ScalarType.UINT64:
    case ScalarType.FIXED64:
      return rng.pick<JsonValue>(["0", "1", "18446744073709551615", String(rng.int(1e9))]);
    case ScalarType.UINT32:
    case ScalarType.FIXED32:
      return rng.pick([0, 1, 4294967295, rng.int(1e6)]);
    default:
      return rng.pick([0, 1, -1, 2147483647, -2147483648, rng.int(1e6)]);
  }
}

const TIMESTAMPS = ["2026-01-01T00:00:00Z", "2030-06-15T12:30:00.123456789Z", "2026-02-30T00:00:00Z", "0001-01-01T00:00:00Z", "9999-12-31T23:59:59Z", "2026-13-01T00:00:00Z", "yesterday"];

function randomMessageJson(rng: Rng, desc: DescMessage, depth: number): JsonValue {
  if (desc.typeName === "google.protobuf.Timestamp") return rng.pick(TIMESTAMPS);
  if (desc.typeName === "google.protobuf.Duration") return rng.pick(["3600s", "0s", "-1s", "315576000001s", "1.5s", "forever"]);
  if (desc.typeName.startsWith("google.protobuf.")) return {};
  return randomJson(rng, desc, depth + 1);
}

function randomElement(rng: Rng, field: DescField, depth: number): JsonValue {
  if (field.enum) return rng.chance(0.9) ? rng.pick(field.enum.values).name : rng.pick<JsonValue>(["NOPE", 99, -1]);
  if (field.message) return depth > 3 ? {} : randomMessageJson(rng, field.message, depth);
  return randomScalar(rng, field.scalar ?? ScalarType.STRING);
}

/** A JSON request of `desc` with random values in its real fields (most of them well-typed). */
export function randomJson(rng: Rng, desc: DescMessage, depth = 0): { [key: string]: JsonValue } {
  const json: { [key: string]: JsonValue } = {};
  for (const field of desc.fields) {
    if (!rng.chance(0.6)) continue;
    if (field.fieldKind === "list") json[field.jsonName] = Array.from({ length: rng.int(3) }, () => randomElement(rng, field, depth));
    else if (field.fieldKind === "map") json[field.jsonName] = Object.fromEntries(Array.from({ length: rng.int(3) }, () => [String(rng.int(100)), randomElement(rng, field, depth)]));
    else json[field.jsonName] = randomElement(rng, field, depth);
  }
  return json;
}

/** The binary form of a random message of `desc` (empty when the random JSON is not a valid message). */
export function randomBinary(rng: Rng, desc: DescMessage): Uint8Array {
  try {
    return toBinary(desc, fromJson(desc, randomJson(rng, desc)));
  } catch {
    return new Uint8Array(0);
  }
}

function varint(value: number): number[] {
  const out: number[] = [];
  let v = value >>> 0;
  while (v > 0x7f) {
    out.push((v & 0x7f) | 0x80);
    v >>>= 7;
  }
  out.push(v);
  return out;
}

/** Protobuf bytes that hurt: flipped, cut, overlong varints, deep nesting, wrong wire types. */
export function mutateBinary(rng: Rng, valid: Uint8Array): Uint8Array {
  const bytes = Uint8Array.from(valid);
  switch (rng.int(8)) {
    case 0:
      return rng.bytes(rng.int(300));
    case 1:
      for (let i = 0; i < 1 + rng.int(4) && bytes.length > 0; i++) bytes[rng.int(bytes.length)] = rng.int(256);
      return bytes;
    case 2:
      return bytes.subarray(0, rng.int(bytes.length + 1));
    case 3:
      return Uint8Array.from([...bytes, ...rng.bytes(1 + rng.int(20))]);
    case 4: // a varint of 11+ bytes, and one that claims a huge length
      return Uint8Array.from([0x08, ...new Array(10 + rng.int(5)).fill(0xff), 0x01, 0x12, 0xff, 0xff, 0xff, 0xff, 0x0f]);
    case 5: {
      // deep nesting: groups (recursed into when skipped) or length-delimited fields
      const depth = 50 + rng.int(2000);
      if (rng.chance(0.5)) return Uint8Array.from([...new Array(depth).fill(0x0b), ...new Array(depth).fill(0x0c)]);
      let nested: number[] = [];
      for (let i = 0; i < Math.min(depth, 300); i++) nested = [0x0a, ...varint(nested.length), ...nested];
      return Uint8Array.from(nested);
    }
    case 6: // a known field number with every wire type
      return Uint8Array.from([((1 + rng.int(12)) << 3) | rng.int(8), ...rng.bytes(rng.int(10))]);
    default:
      return bytes;
  }
}

/** JSON text that hurts: unknown keys, unknown enum names, impossible dates, wrong types, deep nesting, not JSON. */
export function mutateJson(rng: Rng, desc: DescMessage, valid: { [key: string]: JsonValue }): Uint8Array {
  const json: { [key: string]: JsonValue } = { ...valid };
  const field = desc.fields.length > 0 ? rng.pick(desc.fields) : undefined;
  switch (rng.int(9)) {
    case 0:
      json[`unknown_${rng.int(100)}`] = 1;
      break;
    case 1:
      if (field) json[field.jsonName] = rng.pick<JsonValue>([null, [], {}, 1e400 as never, "NOPE", true, [[[]]], { a: 1 }]);
      break;
    case 2: {
      let nested: JsonValue = 1;
      for (let i = 0; i < 50 + rng.int(5000); i++) nested = rng.chance(0.5) ? [nested] : { a: nested };
      if (field) json[field.jsonName] = nested;
      break;
    }
    case 3:
      return Buffer.from(JSON.stringify(json).slice(0, rng.int(JSON.stringify(json).length + 1)));
    case 4:
      return rng.bytes(rng.int(100));
    case 5:
      return Buffer.concat([Buffer.from('{"a":"'), Buffer.from([0xc3, 0x28, 0xff]), Buffer.from('"}')]);
    case 6:
      return Buffer.from(rng.pick(["", "null", "[]", "1", '"x"', "{", '{"a":1,"a":2}', "\uFEFF{}"]));
    default:
      break;
  }
  return Buffer.from(JSON.stringify(json));
}
