import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { UserService } from "../../gen/gatehouse/admin/v1/user_pb.js";
import { BadRequestSchema } from "../../gen/google/rpc/error_details_pb.js";
import { errorShape } from "../support/errors.js";
import { useTestServer } from "../support/server.js";

/**
 * `x-service-orgid` is 1 to 200 characters (src/interceptors/authentication.ts): a longer one is invalid_argument
 * request.invalid with one field violation on the header that says what it must be (API.md "Errors": a clear,
 * typed error), as a client of the RPC protocols reads it.
 */
const t = useTestServer();

describe("an x-service-orgid of 201 characters", () => {
  it("is one violation on the header, rule header.length, saying it must be 1 to 200 characters", async () => {
    const users = t.clients.client(UserService, "grpc-h2c", { token: t.server.adminToken, orgId: "o".repeat(201) });
    const thrown = await users.getUser({ userId: "000000000000000000" }).then(
      () => expect.fail("a 201-character x-service-orgid was accepted"),
      (e: unknown) => e,
    );
    const error = errorShape(thrown);
    expect(error).toMatchObject({ code: Code.InvalidArgument, reason: "request.invalid", fields: ["x-service-orgid"], rules: ["header.length"] });
    expect(error.message).toContain("x-service-orgid must be 1 to 200 characters");
    const violations = ConnectError.from(thrown).findDetails(BadRequestSchema).flatMap((b) => b.fieldViolations);
    expect(violations.map((v) => v.description)).toEqual([expect.stringContaining("1 to 200 characters")]);
  });
});
