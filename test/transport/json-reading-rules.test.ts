import type { JsonValue } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { CreateOidcApplicationRequestSchema } from "../../gen/gatehouse/admin/v1/application_pb.js";
import { AddPersonalAccessTokenRequestSchema, CreateHumanUserRequestSchema } from "../../gen/gatehouse/admin/v1/user_pb.js";
import { duplicateKeyPath } from "../../src/transport/json-duplicate-keys.js";
import { jsonProblems } from "../../src/transport/json-problems.js";

// API.md "Input": what the proto3 JSON reader would pass over or bend is refused with the path as written (unknown
// keys, unknown enum names, impossible calendar days, a key given twice); what it refuses by itself (a value of the
// wrong shape, a date that is no RFC 3339 date at all) is left to it, so that one request gets one answer.

const expirationProblems = (expirationDate: string) => jsonProblems(AddPersonalAccessTokenRequestSchema, { userId: "u", expirationDate });
const notADate = (date: string) => [{ field: "expirationDate", description: `"${date}" is not a calendar date`, rule: "json.timestamp_date" }];

describe("Timestamps: only a real month's days exist", () => {
  it("the last day of each month is a date, the day after it is not", () => {
    for (const [month, days] of [["01", 31], ["03", 31], ["04", 30], ["11", 30], ["12", 31]] as const) {
      const last = `2026-${month}-${days}T00:00:00Z`;
      const after = `2026-${month}-${days + 1}T00:00:00Z`;
      expect(expirationProblems(last), last).toEqual([]);
      expect(expirationProblems(after), after).toEqual(notADate(after));
    }
  });

  it("the first day of a month is a date, its day zero is not", () => {
    expect(expirationProblems("2026-01-01T00:00:00Z")).toEqual([]);
    expect(expirationProblems("2026-01-00T00:00:00Z")).toEqual(notADate("2026-01-00T00:00:00Z"));
  });

  it("a month that does not exist is the reader's to refuse, whatever its day", () => {
    for (const date of ["2026-13-32T00:00:00Z", "2026-00-32T00:00:00Z", "2026-13-15T00:00:00Z"]) expect(expirationProblems(date), date).toEqual([]);
  });

  it("a date that only contains an impossible day further in is no RFC 3339 date: the reader's to refuse", () => {
    expect(expirationProblems("x2026-02-30T00:00:00Z")).toEqual([]);
  });
});

describe("a value of the wrong shape is the reader's to refuse, not a problem of its keys", () => {
  it.each<[string, JsonValue]>([
    ["a string", "Ada"],
    ["a number", 7],
    ["a boolean", true],
    ["a list", [{ firstName: "Ada" }]],
  ])("%s where a message belongs", (_label, profile) => {
    expect(jsonProblems(CreateHumanUserRequestSchema, { userName: "ada", profile })).toEqual([]);
  });

  it("a whole request that is a list or a string", () => {
    expect(jsonProblems(CreateHumanUserRequestSchema, ["userName"])).toEqual([]);
    expect(jsonProblems(CreateHumanUserRequestSchema, "userName")).toEqual([]);
  });

  it("an enum given by its number, or null, is the reader's to read", () => {
    expect(jsonProblems(CreateOidcApplicationRequestSchema, { projectId: "p", name: "n", responseTypes: [1, null], appType: 2 })).toEqual([]);
  });

  it("a single enum name where a list belongs is checked as an item would be", () => {
    expect(jsonProblems(CreateOidcApplicationRequestSchema, { projectId: "p", name: "n", responseTypes: "X" })).toEqual([
      { field: "responseTypes", description: 'unknown value "X" of OidcResponseType', rule: "json.unknown_enum_value" },
    ]);
  });
});

describe("field names", () => {
  it("the proto name of a field is as good as its JSON name", () => {
    expect(jsonProblems(CreateOidcApplicationRequestSchema, { project_id: "p", name: "n", redirect_uris: ["https://a.example"] })).toEqual([]);
  });

  it("a list of plain values has nothing to check: its items are not even read", () => {
    let reads = 0;
    const uris = new Proxy(["https://a.example", "https://b.example"], {
      get(array, key, receiver) {
        if (typeof key === "string" && /^\d+$/.test(key)) reads++;
        return Reflect.get(array, key, receiver);
      },
    });
    expect(jsonProblems(CreateOidcApplicationRequestSchema, { projectId: "p", name: "n", redirectUris: uris })).toEqual([]);
    expect(reads).toBe(0);
  });
});

describe("a key given twice", () => {
  it("a member whose value equals its name is no second key", () => {
    expect(duplicateKeyPath('{"a":"a"}')).toBeUndefined();
    expect(duplicateKeyPath('{"a":"b","b":"a"}')).toBeUndefined();
  });

  it("after a list closes, the next member's name is still read as a name", () => {
    expect(duplicateKeyPath('{"a":[1,2],"a":3}')).toBe("a");
    expect(duplicateKeyPath('{"o":{"x":1},"o":2}')).toBe("o");
  });

  it("names in a list of objects are each object's own", () => {
    expect(duplicateKeyPath('[{"a":1},{"a":2}]')).toBeUndefined();
    expect(duplicateKeyPath('[{"a":1},{"b":1,"b":2}]')).toBe("[1].b");
  });
});
