import http from "node:http";
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DomainError } from "../../src/domain/errors.js";
import { JSON_LIMITS, rejectOversizedJson } from "../../src/transport/json-shape.js";
import { http1Request, jsonErrorReason } from "../fuzz/wire.js";
import { useTestServer } from "../support/server.js";

// API.md "Input" and the brief: work a caller can trigger is bounded. JSON.parse's time depends on a body's shape
// (two million nested brackets, 4 KiB gzipped, held the event loop 2.2 s), and it runs before the caller is known:
// a body nested deeper, or with a wider object or a longer list, than any request message can be is refused first.

const nested = (levels: number) => `${"[".repeat(levels)}${"]".repeat(levels)}`;
const objectOf = (members: number) => `{${Array.from({ length: members }, (_, i) => `"k${i}":${i}`).join(",")}}`;
const listOf = (items: number) => `[${Array(items).fill("1").join(",")}]`;

function refusal(text: string, limits = JSON_LIMITS): DomainError | undefined {
  try {
    rejectOversizedJson(text, limits);
    return undefined;
  } catch (error) {
    if (error instanceof DomainError) return error;
    throw error;
  }
}

describe("the limits, each at its edge", () => {
  it("the limits the server applies", () => {
    expect(JSON_LIMITS).toEqual({ depth: 32, objectMembers: 256, listItems: 10_000, values: 100_000 });
  });

  it("100 000 values in all pass, one more is refused: items, members and containers all count", async () => {
    // Ten lists of 10 000 items in one list: 10 × 9 999 commas between items, 9 between the lists, 11 containers.
    const lists = Array.from({ length: 10 }, () => listOf(10_000)).join(",");
    const values = 10 * 9_999 + 9 + 11;
    const small = { ...JSON_LIMITS, values };
    expect(refusal(`[${lists}]`, small)).toBeUndefined();
    expect(refusal(`[${lists},1]`, small)?.message).toBe(`the request holds more than ${values} values`);
    expect(refusal(`[${lists},[]]`, small)?.message).toBe(`the request holds more than ${values} values`);
    // A container is a value, and so is the member or item each comma starts; nothing else counts, nor a comma
    // outside any container (not JSON: JSON.parse refuses it after this).
    const two = { ...JSON_LIMITS, values: 2 };
    expect(refusal("[[]]", two)).toBeUndefined();
    expect(refusal("[[[]]]", two)?.message).toBe("the request holds more than 2 values");
    expect(refusal('[1234567890, "a,b,c"]', two)).toBeUndefined();
    expect(refusal("1,2,3,4", two)).toBeUndefined();
    // A bulk import's thousand users, each with a profile, an email, a hash and two links, pass the real limit.
    const user = '{"userName":"u","profile":{"givenName":"A","familyName":"B"},"email":{"email":"a@example.com","isVerified":true},"hashedPassword":{"value":"$2b$10$x"},"idps":[{"configId":"c","externalUserId":"e"},{"configId":"d","externalUserId":"f"}]}';
    expect(refusal(`{"users":[${Array(1_000).fill(user).join(",")}]}`)).toBeUndefined();
    // Over the real limit: eleven lists of 10 000.
    expect(refusal(`[${lists},${listOf(10_000)}]`)?.message).toBe("the request holds more than 100000 values");
  });

  it("32 levels pass, 33 are refused: invalid_argument request.malformed", () => {
    expect(refusal(nested(32))).toBeUndefined();
    expect(refusal(nested(33))).toMatchObject({ kind: "invalid_argument", reason: "request.malformed", message: "the request nests deeper than 32 levels" });
    expect(refusal(`{"a":${"{".repeat(31)}${"}".repeat(31)}}`)).toBeUndefined();
    expect(refusal(`{"a":${"{".repeat(32)}${"}".repeat(32)}}`)?.message).toBe("the request nests deeper than 32 levels");
  });

  it("an object of 256 members passes, 257 are refused", () => {
    expect(refusal(objectOf(256))).toBeUndefined();
    expect(refusal(objectOf(257))?.message).toBe("an object of the request has more than 256 members");
  });

  it("a list of 10 000 items passes, 10 001 are refused", () => {
    expect(refusal(listOf(10_000))).toBeUndefined();
    expect(refusal(listOf(10_001))?.message).toBe("a list of the request has more than 10000 items");
  });

  it("a list may hold more than an object may: each is judged by its own limit", () => {
    expect(refusal(listOf(257))).toBeUndefined();
    expect(refusal(`{"a":${listOf(257)}}`)).toBeUndefined();
  });

  it("counts are per object and per list: siblings and parents keep their own", () => {
    expect(refusal(`[${listOf(10_000)},${listOf(10_000)}]`)).toBeUndefined();
    // The parent's members go on being counted after a child closes.
    const members = Array.from({ length: 256 }, (_, i) => `"k${i}":${i === 0 ? objectOf(200) : i}`).join(",");
    expect(refusal(`{${members}}`)).toBeUndefined();
    expect(refusal(`{${members},"one_more":1}`)?.message).toBe("an object of the request has more than 256 members");
    // Closing a level gives it back: 32 levels, twice in a row, stay within 32.
    expect(refusal(`[${nested(31)},${nested(31)}]`)).toBeUndefined();
  });

  it("brackets, braces and commas inside strings are text, escaped quotes included", () => {
    expect(refusal(`{"a":"${"[{,".repeat(20_000)}"}`)).toBeUndefined();
    expect(refusal(`["\\"${"[".repeat(40)}"]`)).toBeUndefined();
    expect(refusal(`["\\\\",${nested(32)}]`)?.message).toBe("the request nests deeper than 32 levels");
  });
});

describe("over the wire", () => {
  const t = useTestServer();
  let agent: http.Agent;
  beforeAll(() => {
    agent = new http.Agent({ keepAlive: true });
  });
  afterAll(() => agent.destroy());
  const GET_USER = "/gatehouse.admin.v1.UserService/GetUser";
  const post = (path: string, body: Buffer | string, headers: Record<string, string> = {}) =>
    http1Request(t.server.url, agent, { path, headers: { "content-type": "application/json", authorization: `Bearer ${t.server.adminToken}`, ...headers }, body });

  it("Connect JSON: a body nested too deep is refused as malformed; one within the limit is not", async () => {
    const deep = await post(GET_USER, `{"userId":"u","x":${nested(40)}}`);
    expect(deep.status).toBe(400);
    expect(jsonErrorReason(deep.body)).toBe("request.malformed");
    expect((JSON.parse(deep.body.toString()) as { message: string }).message).toBe("the request nests deeper than 32 levels");
    // Within the limit, the shape passes and the unknown field is what is refused.
    const within = await post(GET_USER, `{"userId":"u","x":${nested(8)}}`);
    expect(within.status).toBe(400);
    expect((JSON.parse(within.body.toString()) as { message: string }).message).not.toContain("nests deeper");
  });

  it("a body within the limits that is no JSON is still refused as such, after the shape check", async () => {
    const response = await post(GET_USER, '{"userId": "u",');
    expect(response.status).toBe(400);
    expect(jsonErrorReason(response.body)).toBe("request.malformed");
    expect((JSON.parse(response.body.toString()) as { message: string }).message).toBe("the request is not valid UTF-8 JSON");
  });

  it("a gzipped body is judged as inflated: millions of brackets in a few KiB are refused", async () => {
    const bomb = gzipSync(`{"userId":${nested(1_000_000)}}`);
    expect(bomb.byteLength).toBeLessThan(16 * 1024);
    const response = await post(GET_USER, bomb, { "content-encoding": "gzip" });
    expect(response.status).toBe(400);
    expect((JSON.parse(response.body.toString()) as { message: string }).message).toBe("the request nests deeper than 32 levels");
  });

  it("REST: the same refusal, in the SPEC body", async () => {
    const response = await http1Request(t.server.url, agent, {
      path: "/v1/users/human",
      headers: { "content-type": "application/json", authorization: `Bearer ${t.server.adminToken}` },
      body: `{"userName":"deep","profile":${objectOf(300)}}`,
    });
    expect(response.status).toBe(400);
    const json = JSON.parse(response.body.toString()) as { code: number; message: string; details: Record<string, unknown>[] };
    expect(json.code).toBe(3);
    expect(json.message).toBe("an object of the request has more than 256 members");
    expect(json.details).toEqual(expect.arrayContaining([expect.objectContaining({ reason: "request.malformed" })]));
  });
});
