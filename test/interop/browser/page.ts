/// <reference lib="dom" />
// Runs in headless Chromium: calls Gatehouse from another origin with connect-web's gRPC-web transport.
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcWebTransport } from "@connectrpc/connect-web";
import { UserService } from "../../../gen/gatehouse/admin/v1/user_pb.js";
import { BadRequestSchema, ErrorInfoSchema } from "../../../gen/google/rpc/error_details_pb.js";

const params = new URLSearchParams(location.search);
const transport = createGrpcWebTransport({
  baseUrl: params.get("server") ?? "",
  interceptors: [
    (next) => (req) => {
      req.header.set("authorization", `Bearer ${params.get("token") ?? ""}`);
      return next(req);
    },
  ],
});
const users = createClient(UserService, transport);

async function typedError(call: Promise<unknown>) {
  try {
    await call;
    return { code: "ok" };
  } catch (error) {
    const connectError = ConnectError.from(error);
    return {
      code: Code[connectError.code],
      reason: connectError.findDetails(ErrorInfoSchema)[0]?.reason,
      fields: connectError.findDetails(BadRequestSchema)[0]?.fieldViolations.map((v) => v.field) ?? [],
      requestId: connectError.metadata.get("x-request-id"),
    };
  }
}

async function main() {
  const created = await users.createHumanUser({ userName: "browser", profile: { firstName: "Bro", lastName: "Wser" }, email: { email: "browser@example.com" } });
  const invalid = await typedError(users.createHumanUser({ userName: "", profile: { firstName: "B", lastName: "W" }, email: { email: "x@example.com" } }));
  const missing = await typedError(users.verifyEmail({ userId: "no-such-user", verificationCode: "ABC123" }));
  return { userId: created.userId, invalid, missing };
}

main().then(
  (result) => {
    document.body.dataset.result = JSON.stringify(result);
    document.title = "done";
  },
  (error: unknown) => {
    document.body.dataset.result = JSON.stringify({ failed: String(error) });
    document.title = "done";
  },
);
