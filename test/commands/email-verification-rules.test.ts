import { Code } from "@connectrpc/connect";
import { beforeAll, describe, expect, it } from "vitest";
import { OrganizationService } from "../../gen/gatehouse/admin/v1/organization_pb.js";
import { UserService } from "../../gen/gatehouse/admin/v1/user_pb.js";
import { verifyEmail } from "../../src/commands/email-verification.js";
import type { Caller } from "../../src/context.js";
import { failure } from "../support/errors.js";
import { useTestServer } from "../support/server.js";
import { adminCaller, eventTypesOf, interleavedDeps, typed } from "./rules-support.js";

/**
 * VerifyEmail's answers when there is nothing to verify (user.proto): `user.not_human` for a machine
 * user, and `email_code.invalid` when no code is pending and the email is unverified; neither appends
 * an event ("an attempt when no code is pending appends none").
 */
const t = useTestServer();
let orgId: string;
let caller: Caller;

beforeAll(async () => {
  ({ organizationId: orgId } = await t.clients.client(OrganizationService, "connect-json-http1", { token: t.server.adminToken }).createOrganization({ name: "Email rules" }));
  caller = await adminCaller(t, orgId);
});

const users = () => t.clients.client(UserService, "connect-json-http1", { token: t.server.adminToken, orgId });

describe("VerifyEmail with nothing to verify", () => {
  it("for a machine user is failed_precondition user.not_human, and appends nothing", async () => {
    const { userId } = await users().createMachineUser({ userName: "no-mailbox", name: "Robot" });
    const error = await failure(users().verifyEmail({ userId, verificationCode: "ABC123" }));
    expect(error).toMatchObject({ code: Code.FailedPrecondition, reason: "user.not_human" });
    expect(await eventTypesOf(t, "user", userId)).toEqual(["user.machine.added"]);
  });

  it("when the pending code was voided after the user was read (its address set verified meanwhile) is email_code.invalid, and appends nothing of the attempt", async () => {
    const { userId } = await users().createHumanUser({
      userName: "voided-code",
      profile: { firstName: "Void", lastName: "Ed" },
      email: { email: "voided@example.com", isEmailVerified: false },
    });
    // The attempt reads the user (unverified), then SetEmail marks a new address verified and voids
    // the code, then the attempt looks for the code: none is pending, and the user it read is unverified.
    const deps = interleavedDeps(t, () => users().setEmail({ userId, email: "voided-new@example.com", isVerified: true }), "findCode");
    const error = await verifyEmail(deps, caller, { userId, verificationCode: "ABC123" }).catch((e: unknown) => e);
    expect(typed(error as never)).toEqual({ kind: "invalid_argument", reason: "email_code.invalid", metadata: {} });
    const types = await eventTypesOf(t, "user", userId);
    expect(types.filter((type) => type.startsWith("user.email.verif"))).toEqual([]);
    expect(types.at(-1)).toBe("user.email.changed");
  });
});
