import { Code } from "@connectrpc/connect";
import { beforeEach, describe, expect, it } from "vitest";
import { SmtpService } from "../../gen/gatehouse/admin/v1/smtp_pb.js";
import { failure } from "../support/errors.js";
import { useTestServer } from "../support/server.js";
import { eventTypesOf } from "./rules-support.js";

/**
 * smtp.proto: an UpdateSmtpConfig that changes nothing succeeds with the current details, and drops no
 * password (password_dropped is true only when this update dropped it); TestSmtpConfig refuses a bad
 * receiver address and an unsaved configuration with a user but no password before dialing anything.
 * No test here reaches an SMTP server: every refusal comes before the dial.
 */
const t = useTestServer();
const smtp = () => t.clients.client(SmtpService, "connect-json-http1", { token: t.server.adminToken });
const settings = { senderAddress: "noreply@rules.example.com", senderName: "Rules", tls: true, host: "smtp.rules.example.com:587", user: "mailer" };
let instanceId: string;

// Every test starts from the same saved configuration with a stored password.
beforeEach(async () => {
  await smtp().removeSmtpConfig({}).catch(() => undefined);
  await smtp().createSmtpConfig({ ...settings, password: "stored-secret" });
  instanceId = (await smtp().getSmtpConfig({})).config!.details!.resourceOwner;
});

describe("UpdateSmtpConfig that changes nothing", () => {
  it("answers password_dropped false while a password is stored, keeps the password, and appends no event", async () => {
    const before = await eventTypesOf(t, "smtp", instanceId);
    const { config } = await smtp().getSmtpConfig({});
    const same = await smtp().updateSmtpConfig(settings);
    expect(same.passwordDropped).toBe(false);
    expect(same.details?.sequence).toBe(config?.details?.sequence);
    expect((await smtp().getSmtpConfig({})).config?.hasPassword).toBe(true);
    expect(await eventTypesOf(t, "smtp", instanceId)).toEqual(before);
  });
});

describe("TestSmtpConfig refusals", () => {
  it("a receiver address that is not an email address is invalid_argument email.invalid, one violation on receiver_address", async () => {
    const error = await failure(smtp().testSmtpConfig({ receiverAddress: "not an address" }));
    expect(error).toMatchObject({ code: Code.InvalidArgument, reason: "email.invalid", fields: ["receiver_address"], rules: ["email.invalid"] });
  });

  it("an unsaved configuration with a user but no password is invalid_argument smtp.password_required, one violation on password with that rule", async () => {
    const error = await failure(smtp().testSmtpConfig({ receiverAddress: "probe@rules.example.com", config: { ...settings, host: "other.rules.example.com:587" } }));
    expect(error).toMatchObject({ code: Code.InvalidArgument, reason: "smtp.password_required", fields: ["password"], rules: ["smtp.password_required"] });
  });
});
