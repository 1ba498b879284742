import type { JsonValue } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { AddPersonalAccessTokenRequestSchema, CreateHumanUserRequestSchema } from "../../gen/gatehouse/admin/v1/user_pb.js";
import { ErrorInfoSchema } from "../../gen/google/rpc/error_details_pb.js";
import { HealthListResponseSchema } from "../../gen/grpc/health/v1/health_pb.js";
import { DomainError } from "../../src/domain/errors.js";
import { checkJsonMessage, checkMessage } from "../../src/transport/decode-check.js";
import { duplicateKeyPath } from "../../src/transport/json-duplicate-keys.js";
import { jsonProblems, MAX_PROBLEMS } from "../../src/transport/json-problems.js";
import { peerAddressOf } from "../../src/transport/peer.js";
import { thrownBy } from "../support/thrown.js";

// API.md "Input": JSON keys a message does not have, enum names its enum does not have and impossible dates are
// refused with the path as the caller wrote it (at most MAX_PROBLEMS, names cut short: a hostile body must not
// become a huge answer); a key that appears twice is refused naming its path; whatever a hostile body makes the
// check itself throw is still invalid_argument request.malformed, never internal.

const A64 = "a".repeat(64);

describe("unknown keys and values: names in answers are cut to 64 characters", () => {
  it("an unknown key of 100 characters is quoted as its first 64 and an ellipsis", () => {
    const key = "a".repeat(100);
    expect(jsonProblems(CreateHumanUserRequestSchema, { [key]: 1 })).toEqual([
      { field: A64, description: `unknown field "${A64}…" of CreateHumanUserRequest`, rule: "json.unknown_field" },
    ]);
  });

  it("a long unknown key inside an object: the path's last name is cut to 64 characters too", () => {
    expect(jsonProblems(CreateHumanUserRequestSchema, { profile: { ["b".repeat(100)]: 1 } })[0]?.field).toBe(`profile.${"b".repeat(64)}`);
  });

  it("a short unknown key, and one of exactly 64 characters, is quoted whole", () => {
    expect(jsonProblems(CreateHumanUserRequestSchema, { nickName: 1 })[0]?.description).toBe('unknown field "nickName" of CreateHumanUserRequest');
    expect(jsonProblems(CreateHumanUserRequestSchema, { [A64]: 1 })[0]?.description).toBe(`unknown field "${A64}" of CreateHumanUserRequest`);
  });

  it("the refusal names every problem found, each with its path", () => {
    const error = thrownBy(DomainError, () => checkJsonMessage(CreateHumanUserRequestSchema, { nick: 1, profile: { age: 2 } }));
    expect(error).toMatchObject({ kind: "invalid_argument", reason: "request.malformed" });
    expect(error.message).toBe('invalid request: nick: unknown field "nick" of CreateHumanUserRequest; profile.age: unknown field "age" of Profile');
  });
});

describe("map fields: each value is checked like a field, its path is field[\"key\"]", () => {
  it("a map of messages: unknown keys and unknown enum names inside its values", () => {
    expect(jsonProblems(HealthListResponseSchema, { statuses: { a: { q: 1 }, b: { status: "SERVING" }, c: { status: "NOPE" } } })).toEqual([
      { field: 'statuses["a"].q', description: 'unknown field "q" of HealthCheckResponse', rule: "json.unknown_field" },
      { field: 'statuses["c"].status', description: 'unknown value "NOPE" of ServingStatus', rule: "json.unknown_enum_value" },
    ]);
  });

  it("a map of well-formed messages has no problem", () => {
    expect(jsonProblems(HealthListResponseSchema, { statuses: { a: { status: "SERVING" }, b: {} } })).toEqual([]);
  });

  it("a map of a million bad values: the walk stops at the cap", () => {
    let reads = 0;
    const values: Record<string, JsonValue> = {};
    for (let i = 0; i < 100_000; i++) values[`s${i}`] = { q: i };
    const counted = new Proxy(values, {
      get(object, key, receiver) {
        if (typeof key === "string") reads++;
        return Reflect.get(object, key, receiver);
      },
    });
    const problems = jsonProblems(HealthListResponseSchema, { statuses: counted });
    expect(problems).toHaveLength(MAX_PROBLEMS);
    expect(problems[9]?.field).toBe('statuses["s9"].q');
    expect(reads).toBeLessThanOrEqual(MAX_PROBLEMS + 1);
  });

  it("a map of strings has nothing to check: its values are not even read", () => {
    let reads = 0;
    const metadata: Record<string, JsonValue> = {};
    for (let i = 0; i < 1_000; i++) metadata[`k${i}`] = "v";
    const counted = new Proxy(metadata, {
      get(object, key, receiver) {
        if (typeof key === "string") reads++;
        return Reflect.get(object, key, receiver);
      },
    });
    expect(jsonProblems(ErrorInfoSchema, { reason: "r", metadata: counted })).toEqual([]);
    expect(reads).toBe(0);
  });
});

describe("Timestamps: an impossible calendar day is refused; what is no RFC 3339 date at all is the JSON reader's to refuse", () => {
  const problemsOf = (expirationDate: string) => jsonProblems(AddPersonalAccessTokenRequestSchema, { userId: "u", expirationDate });

  it("February 30th is json.timestamp_date", () => {
    expect(problemsOf("2026-02-30T00:00:00Z")).toEqual([{ field: "expirationDate", description: '"2026-02-30T00:00:00Z" is not a calendar date', rule: "json.timestamp_date" }]);
  });

  it("February 29th only in leap years: every fourth year, but not centuries unless divisible by 400", () => {
    for (const [year, leap] of [[2024, true], [2026, false], [2000, true], [1900, false], [2100, false], [2400, true]] as const) {
      const date = `${year}-02-29T00:00:00Z`;
      expect(problemsOf(date), date).toEqual(leap ? [] : [{ field: "expirationDate", description: `"${date}" is not a calendar date`, rule: "json.timestamp_date" }]);
    }
    expect(problemsOf("2024-02-30T00:00:00Z")).toHaveLength(1);
    expect(problemsOf("2026-04-31T00:00:00Z")).toHaveLength(1);
    expect(problemsOf("2026-12-31T00:00:00Z")).toEqual([]);
    expect(problemsOf("2026-01-00T00:00:00Z")).toHaveLength(1);
  });

  it("no date, or a month 13: no calendar-date problem; the request is still refused as undecodable", () => {
    for (const value of ["tomorrow", "2026-13-01T00:00:00Z", "2026-00-10T00:00:00Z"]) {
      expect(problemsOf(value), value).toEqual([]);
      const error = thrownBy(DomainError, () => checkJsonMessage(AddPersonalAccessTokenRequestSchema, { userId: "u", expirationDate: value }));
      expect(error, value).toMatchObject({ kind: "invalid_argument", reason: "request.malformed" });
      expect(error.message, value).toMatch(/^undecodable JSON request: /);
    }
  });
});

describe("a body that makes the check itself throw is still the body's fault: invalid_argument request.malformed", () => {
  it("an error is named by its kind", () => {
    const hostile = new Proxy({} as Record<string, JsonValue>, {
      ownKeys() {
        throw new RangeError("too much");
      },
    });
    const error = thrownBy(DomainError, () => checkJsonMessage(CreateHumanUserRequestSchema, hostile));
    expect(error).toMatchObject({ kind: "invalid_argument", reason: "request.malformed", message: "the request could not be checked (RangeError)" });
  });

  it("something thrown that is no Error at all", () => {
    const hostile = new Proxy({} as Record<string, JsonValue>, {
      ownKeys() {
        throw "no error";
      },
    });
    const error = thrownBy(DomainError, () => checkJsonMessage(CreateHumanUserRequestSchema, hostile));
    expect(error).toMatchObject({ kind: "invalid_argument", reason: "request.malformed", message: "the request could not be checked (error)" });
  });
});

describe("duplicate keys: the path names the key, cut short when long", () => {
  it("a key of 100 characters on the path is its first 64 and an ellipsis", () => {
    expect(duplicateKeyPath(`{"${"a".repeat(100)}": {"x": 1, "x": 2}}`)).toBe(`${A64}….x`);
  });

  it("a path longer than 256 characters is cut at 256, with an ellipsis", () => {
    const key = "k".repeat(20);
    const depth = 20;
    const text = `${`{"${key}": `.repeat(depth)}{"x": 1, "x": 2}${"}".repeat(depth)}`;
    const full = [...Array.from({ length: depth }, () => key), "x"].join(".");
    expect(full.length).toBeGreaterThan(256);
    expect(duplicateKeyPath(text)).toBe(`${full.slice(0, 256)}…`);
  });

  it("a key of exactly 64 characters, and a path of exactly 256, are not cut", () => {
    expect(duplicateKeyPath(`{"${A64}": 1, "${A64}": 2}`)).toBe(A64);
    const key = "k".repeat(63);
    const text = `{"${key}": {"${key}": {"${key}": {"${key}": 1, "${key}": 2}}}}`;
    const path = [key, key, key, key].join(".");
    expect(path).toHaveLength(255);
    const exact = `{"${key}": {"${key}": {"${key}": {"${key}k": 1, "${key}k": 2}}}}`;
    expect(duplicateKeyPath(text)).toBe(path);
    expect(duplicateKeyPath(exact)).toBe(`${path}k`);
  });

  it("a duplicate key in a request body: invalid_argument request.duplicate_key naming the key, as a field violation too", () => {
    const body = new TextEncoder().encode('{"userName": "a", "userName": "b"}');
    const error = thrownBy(DomainError, () => checkMessage(CreateHumanUserRequestSchema, body, false));
    expect(error).toMatchObject({ kind: "invalid_argument", reason: "request.duplicate_key", metadata: { key: "userName" } });
    expect(error.message).toBe('duplicate key "userName" in the request');
    expect(error.violations).toEqual([{ field: "userName", description: "appears more than once in its object", rule: "json.duplicate_key" }]);
  });

  it("a path of exactly the keys when short", () => {
    expect(duplicateKeyPath('{"profile": {"firstName": "a", "firstName": "b"}}')).toBe("profile.firstName");
  });
});

describe("the peer of a connection: one spelling per address, empty when unknown", () => {
  it("IPv4-mapped IPv6 is the plain IPv4 address; other addresses stay as they are", () => {
    expect(peerAddressOf({ remoteAddress: "::ffff:10.0.0.1" })).toBe("10.0.0.1");
    expect(peerAddressOf({ remoteAddress: "10.0.0.1" })).toBe("10.0.0.1");
    expect(peerAddressOf({ remoteAddress: "::1" })).toBe("::1");
    expect(peerAddressOf({ remoteAddress: "::ffff:a00:1" })).toBe("::ffff:a00:1");
  });

  it("no socket, or a socket without an address (closed already): empty", () => {
    expect(peerAddressOf(undefined)).toBe("");
    expect(peerAddressOf(null)).toBe("");
    expect(peerAddressOf({})).toBe("");
  });
});
