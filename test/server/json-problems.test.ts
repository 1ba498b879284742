import type { JsonValue } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { CreateHumanUserRequestSchema } from "../../gen/gatehouse/admin/v1/user_pb.js";
import { CreateOidcApplicationRequestSchema } from "../../gen/gatehouse/admin/v1/application_pb.js";
import { jsonProblems, MAX_PROBLEMS } from "../../src/transport/json-problems.js";

/** A list that counts how many of its items were read. */
function countingList(item: () => JsonValue, length: number): { list: JsonValue[]; reads: () => number } {
  let reads = 0;
  const target = Array.from({ length }, item);
  const list = new Proxy(target, {
    get(array, key, receiver) {
      if (typeof key === "string" && /^\d+$/.test(key)) reads++;
      return Reflect.get(array, key, receiver);
    },
  });
  return { list, reads: () => reads };
}

describe("jsonProblems stops at the cap instead of walking the whole input", () => {
  it("a list of a million unknown enum names: ten violations after reading about ten items", () => {
    const { list, reads } = countingList(() => "X", 1_000_000);
    const problems = jsonProblems(CreateOidcApplicationRequestSchema, { responseTypes: list });
    expect(problems).toHaveLength(MAX_PROBLEMS);
    expect(problems[0]).toMatchObject({ field: "responseTypes[0]", rule: "json.unknown_enum_value" });
    expect(reads()).toBeLessThanOrEqual(MAX_PROBLEMS + 1);
  });

  it("a list of messages with unknown keys stops the same way", () => {
    const { list, reads } = countingList(() => ({ q: 1 }), 200_000);
    const problems = jsonProblems(CreateHumanUserRequestSchema, { idps: list });
    expect(problems).toHaveLength(MAX_PROBLEMS);
    expect(problems[9]).toMatchObject({ field: "idps[9].q", rule: "json.unknown_field" });
    expect(reads()).toBeLessThanOrEqual(MAX_PROBLEMS + 1);
  });

  it("unknown top-level keys beyond the cap are not looked at", () => {
    const json: Record<string, JsonValue> = {};
    for (let i = 0; i < 100_000; i++) json[`k${i}`] = i;
    let reads = 0;
    const counted = new Proxy(json, {
      get(object, key, receiver) {
        if (typeof key === "string") reads++;
        return Reflect.get(object, key, receiver);
      },
    });
    expect(jsonProblems(CreateHumanUserRequestSchema, counted)).toHaveLength(MAX_PROBLEMS);
    expect(reads).toBeLessThanOrEqual(MAX_PROBLEMS + 1);
  });
});
