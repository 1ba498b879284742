import type { JsonValue } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { CreateOidcApplicationRequestSchema } from "../../gen/gatehouse/admin/v1/application_pb.js";
import { duplicateKeyPath } from "../../src/transport/json-duplicate-keys.js";
import { jsonProblems, MAX_PROBLEMS } from "../../src/transport/json-problems.js";

// API.md "Input": each item of a list is checked like a field, its path is field[index]; a hostile list of a million
// bad items costs MAX_PROBLEMS violations, not a million (the walk stops at the cap); a duplicate key is named by
// its full path through objects and lists.

describe("list fields: each item is checked, its path is field[index]", () => {
  it("unknown enum names in a list: one problem per bad item, with its index", () => {
    expect(jsonProblems(CreateOidcApplicationRequestSchema, { projectId: "p", name: "n", responseTypes: ["X", "Y"] })).toEqual([
      { field: "responseTypes[0]", description: 'unknown value "X" of OidcResponseType', rule: "json.unknown_enum_value" },
      { field: "responseTypes[1]", description: 'unknown value "Y" of OidcResponseType', rule: "json.unknown_enum_value" },
    ]);
  });

  it("a list of a million bad items: ten problems, and the items after the tenth are not even read", () => {
    let reads = 0;
    const items: JsonValue[] = new Array(1_000_000).fill("X");
    const counted = new Proxy(items, {
      get(array, key, receiver) {
        if (typeof key === "string" && /^\d+$/.test(key)) reads++;
        return Reflect.get(array, key, receiver);
      },
    });
    const problems = jsonProblems(CreateOidcApplicationRequestSchema, { projectId: "p", name: "n", responseTypes: counted });
    expect(problems).toHaveLength(MAX_PROBLEMS);
    expect(problems[MAX_PROBLEMS - 1]?.field).toBe(`responseTypes[${MAX_PROBLEMS - 1}]`);
    expect(reads).toBeLessThanOrEqual(MAX_PROBLEMS + 1);
  });
});

describe("a duplicate key is named by its path through objects and lists", () => {
  it("inside the second object of a list inside an object", () => {
    expect(duplicateKeyPath('{"user": {"idps": [{"configId": "a"}, {"configId": "a", "configId": "b"}]}}')).toBe("user.idps[1].configId");
  });

  it("at the top level, and under an empty name", () => {
    expect(duplicateKeyPath('{"a": 1, "a": 2}')).toBe("a");
    expect(duplicateKeyPath('{"": {"x": 1, "x": 2}}')).toBe("x");
  });
});
