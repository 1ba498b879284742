import { fromBinary } from "@bufbuild/protobuf";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { BadRequestSchema, ErrorInfoSchema } from "../../gen/google/rpc/error_details_pb.js";
import { StatusSchema } from "../../gen/google/rpc/status_pb.js";
import { useTestServer } from "../support/server.js";

const t = useTestServer();
const protoRoot = fileURLToPath(new URL("../../proto", import.meta.url));

/** @grpc/grpc-js with stubs loaded at run time from our .proto files by @grpc/proto-loader. */
const definition = protoLoader.loadSync("gatehouse/admin/v1/user.proto", {
  includeDirs: [protoRoot, `${protoRoot}/vendor`],
  keepCase: false,
  longs: String,
  enums: String,
  defaults: false,
  oneofs: true,
});
const loaded = grpc.loadPackageDefinition(definition) as unknown as {
  gatehouse: { admin: { v1: { UserService: grpc.ServiceClientConstructor } } };
};

type Unary = (request: object, metadata: grpc.Metadata, callback: (error: grpc.ServiceError | null, response: Record<string, unknown>) => void) => void;
let client: grpc.Client & Record<string, Unary>;
afterAll(() => client?.close());

function call(method: string, request: object): Promise<Record<string, unknown>> {
  client ??= new loaded.gatehouse.admin.v1.UserService(new URL(t.server.url).host, grpc.credentials.createInsecure()) as never;
  const metadata = new grpc.Metadata();
  metadata.set("authorization", `Bearer ${t.server.adminToken}`);
  return new Promise((resolve, reject) => client[method]!.call(client, request, metadata, (error, response) => (error ? reject(error) : resolve(response))));
}

/** Decodes grpc-status-details-bin (a google.rpc.Status) into its ErrorInfo and BadRequest. */
function statusDetails(error: grpc.ServiceError) {
  const bin = error.metadata.get("grpc-status-details-bin")[0] as Buffer;
  const status = fromBinary(StatusSchema, bin);
  const detail = (typeName: string) => status.details.find((any) => any.typeUrl.endsWith(typeName))?.value ?? new Uint8Array();
  return { info: fromBinary(ErrorInfoSchema, detail("google.rpc.ErrorInfo")), badRequest: fromBinary(BadRequestSchema, detail("google.rpc.BadRequest")) };
}

async function failure(promise: Promise<unknown>): Promise<grpc.ServiceError> {
  try {
    await promise;
  } catch (error) {
    return error as grpc.ServiceError;
  }
  throw new Error("the call succeeded but should have failed");
}

describe("@grpc/grpc-js + @grpc/proto-loader", () => {
  it("creates a user and verifies its email", async () => {
    const created = await call("createHumanUser", { userName: "grpcjs", profile: { firstName: "G", lastName: "J" }, email: { email: "grpcjs@example.com" } });
    const userId = created.userId as string;
    const { verificationCode } = await call("resendEmailCode", { userId, returnCode: true });
    const verified = await call("verifyEmail", { userId, verificationCode });
    expect((verified.details as { resourceOwner: string }).resourceOwner).not.toBe("");
  });

  it("sees invalid_argument with its BadRequest detail decoded, and not_found", async () => {
    const invalid = await failure(call("createHumanUser", { userName: "grpcjs-bad", profile: { firstName: "", lastName: "J" }, email: { email: "x@example.com" } }));
    expect(invalid.code).toBe(grpc.status.INVALID_ARGUMENT);
    const { info, badRequest } = statusDetails(invalid);
    expect(info).toMatchObject({ reason: "request.invalid", domain: "gatehouse" });
    expect(badRequest.fieldViolations.map((v) => v.field)).toEqual(["profile.first_name"]);

    const missing = await failure(call("verifyEmail", { userId: "no-such-user", verificationCode: "ABC123" }));
    expect(missing.code).toBe(grpc.status.NOT_FOUND);
    expect(statusDetails(missing).info.reason).toBe("user.not_found");
  });
});
