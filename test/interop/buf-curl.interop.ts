import { fromBinary } from "@bufbuild/protobuf";
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { BadRequestSchema, ErrorInfoSchema } from "../../gen/google/rpc/error_details_pb.js";
import { useTestServer } from "../support/server.js";

const run = promisify(execFile);
const buf = fileURLToPath(new URL("../../node_modules/.bin/buf", import.meta.url));
const t = useTestServer();

/** `buf curl` with no proto files: the schema comes from server reflection. */
const variants = [
  { name: "grpc (h2c)", args: ["--protocol", "grpc", "--http2-prior-knowledge"] },
  { name: "grpcweb (h2c)", args: ["--protocol", "grpcweb", "--http2-prior-knowledge"] },
  { name: "grpcweb (HTTP/1.1)", args: ["--protocol", "grpcweb"] },
  { name: "connect (HTTP/1.1)", args: ["--protocol", "connect"] },
];

async function bufCurl(args: string[], procedure: string, body: unknown): Promise<{ exit: number; json: Record<string, unknown> }> {
  try {
    const { stdout } = await run(buf, ["curl", ...args, "-H", `Authorization: Bearer ${t.server.adminToken}`, "-d", JSON.stringify(body), `${t.server.url}/${procedure}`]);
    return { exit: 0, json: JSON.parse(stdout) as Record<string, unknown> };
  } catch (error) {
    const { code, stderr } = error as { code: number; stderr: string };
    return { exit: code, json: JSON.parse(stderr) as Record<string, unknown> };
  }
}

/** Decodes the google.rpc details buf curl prints as base64. */
function details(json: Record<string, unknown>) {
  const list = (json.details ?? []) as { type: string; value: string }[];
  const bytes = (type: string) => Buffer.from(list.find((d) => d.type === type)?.value ?? "", "base64");
  return { info: fromBinary(ErrorInfoSchema, bytes("google.rpc.ErrorInfo")), badRequest: fromBinary(BadRequestSchema, bytes("google.rpc.BadRequest")) };
}

let n = 0;
describe.each(variants)("buf curl, $name, by reflection", ({ args }) => {
  it("creates a user, verifies its email, and sees the same typed errors", async () => {
    const userName = `bufcurl-${++n}`;
    const created = await bufCurl(args, "gatehouse.admin.v1.UserService/CreateHumanUser", {
      userName,
      profile: { firstName: "Buf", lastName: "Curl" },
      email: { email: `${userName}@example.com` },
    });
    expect(created.exit).toBe(0);
    const userId = created.json.userId as string;
    const code = await bufCurl(args, "gatehouse.admin.v1.UserService/ResendEmailCode", { userId, returnCode: true });
    const verified = await bufCurl(args, "gatehouse.admin.v1.UserService/VerifyEmail", { userId, verificationCode: code.json.verificationCode });
    expect(verified.exit).toBe(0);
    expect(verified.json.details).toMatchObject({ resourceOwner: expect.any(String) as unknown });

    const invalid = await bufCurl(args, "gatehouse.admin.v1.UserService/CreateHumanUser", { userName: "", profile: { firstName: "a", lastName: "b" }, email: { email: "x@example.com" } });
    expect(invalid.exit).toBe(3 * 8); // buf curl exits with the gRPC code × 8
    expect(invalid.json.code).toBe("invalid_argument");
    expect(details(invalid.json).info.reason).toBe("request.invalid");
    expect(details(invalid.json).badRequest.fieldViolations.map((v) => v.field)).toEqual(["user_name"]);

    const missing = await bufCurl(args, "gatehouse.admin.v1.UserService/VerifyEmail", { userId: "no-such-user", verificationCode: "ABC123" });
    expect(missing.exit).toBe(5 * 8);
    expect(details(missing.json).info.reason).toBe("user.not_found");
  });
});
