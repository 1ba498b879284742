import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { UserService } from "../../gen/gatehouse/admin/v1/user_pb.js";
import { BadRequestSchema } from "../../gen/google/rpc/error_details_pb.js";
import { normalizeRequest } from "../../src/interceptors/validation.js";
import { field, mapEntry, messageOf, REPEATED, TYPE_MESSAGE, TYPE_STRING } from "../support/descriptors.js";
import { errorShape } from "../support/errors.js";
import { useTestServer } from "../support/server.js";

/**
 * The validation interceptor's own rules (src/interceptors/validation.ts) beyond the .proto: a Duration is in range
 * only with seconds within ±315 576 000 000, |nanos| < 10⁹ and both of the same sign (google/protobuf/duration.proto);
 * lists and maps of plain values are walked past, not into; and a refused request's message lists every broken rule
 * with its field. (Timestamps and the walk into nested messages: test/domain/request-normalization.test.ts.)
 */
const Request = messageOf(
  {
    name: "request_walk_test.proto",
    package: "walk",
    messageType: [
      {
        name: "Request",
        field: [
          field("span", 1, TYPE_MESSAGE, ".google.protobuf.Duration"),
          field("tags", 2, TYPE_STRING, undefined, REPEATED),
          field("labels", 3, TYPE_MESSAGE, ".walk.Request.LabelsEntry", REPEATED),
        ],
        nestedType: [mapEntry("LabelsEntry", TYPE_STRING, { type: TYPE_STRING })],
      },
    ],
  },
  "walk.Request",
);
const spanViolations = (seconds: bigint, nanos: number) => normalizeRequest(Request, create(Request, { span: { seconds, nanos } } as never));

describe("a Duration", () => {
  it.each([
    [0n, 5],
    [0n, -5],
    [5n, 0],
    [-5n, 0],
    [0n, 999_999_999],
    [0n, -999_999_999],
    [315_576_000_000n, 0],
    [-315_576_000_000n, 0],
  ])("of %s s and %s ns is in range", (seconds, nanos) => {
    expect(spanViolations(seconds, nanos)).toEqual([]);
  });

  it.each([
    [1n, -1],
    [-1n, 1],
    [0n, 1_000_000_000],
    [0n, -1_000_000_000],
    [315_576_000_001n, 0],
    [-315_576_000_001n, 0],
  ])("of %s s and %s ns is refused as duration.range, saying what is allowed", (seconds, nanos) => {
    const [violation, ...more] = spanViolations(seconds, nanos);
    expect(more).toEqual([]);
    expect(violation).toMatchObject({ field: "span", rule: "duration.range" });
    expect(violation?.description).toContain("315576000000");
  });
});

describe("lists and maps of plain values", () => {
  it("are walked past: no violation, values unchanged", () => {
    const message = create(Request, { tags: [" a ", "b"], labels: { k: " v " } } as never) as unknown as { tags: string[]; labels: Record<string, string> };
    expect(normalizeRequest(Request, message as never)).toEqual([]);
    expect(message).toMatchObject({ tags: [" a ", "b"], labels: { k: " v " } });
  });
});

describe("a refused request over a real server", () => {
  const t = useTestServer();
  it("is invalid_argument whose message names every broken field with what it must be", async () => {
    const users = t.clients.client(UserService, "connect-json-http1", { token: t.server.adminToken });
    const error = await users
      .createHumanUser({ userName: "", profile: { firstName: "", lastName: "Ok" }, email: { email: "ada@example.com" } })
      .then(() => expect.fail("an empty user name was accepted"))
      .catch((thrown: unknown) => thrown);
    const shape = errorShape(error);
    expect(shape.code).toBe(Code.InvalidArgument);
    expect(shape.fields).toEqual(expect.arrayContaining(["user_name", "profile.first_name"]));
    expect(shape.message).toMatch(/^invalid request: /);
    const violations = ConnectError.from(error).findDetails(BadRequestSchema).flatMap((b) => b.fieldViolations);
    for (const { field: path, description } of violations) {
      expect(description).not.toBe("");
      expect(shape.message).toContain(`${path}: ${description}`);
    }
    expect(shape.message.split("; ")).toHaveLength(shape.fields.length);
    expect(shape.message).not.toContain("undefined");
  });
});
