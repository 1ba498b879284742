import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { EventService } from "../../gen/gatehouse/admin/v1/event_pb.js";
import { InstanceService } from "../../gen/gatehouse/admin/v1/instance_pb.js";
import { SmtpService } from "../../gen/gatehouse/admin/v1/smtp_pb.js";
import { PROTOCOLS } from "../support/clients.js";
import { failure } from "../support/errors.js";
import { lastSequence } from "../support/event-log.js";
import { useTestServer } from "../support/server.js";
import { makeTestCa, startSmtpServer, type TestSmtpServer } from "../support/smtp.js";
import { createActor } from "../support/world.js";

const ca = makeTestCa();
const t = useTestServer({ config: { mail: { smtpCaFile: ca.caFile, smtpTimeoutMs: 2_000, pollMs: 60_000, maxAttempts: 3, retryBaseMs: 1_000 } } });
const SECRET = "smtp-password-never-shown";
let relay: TestSmtpServer;
let plain: TestSmtpServer;

beforeAll(async () => {
  relay = await startSmtpServer({ tls: "starttls", certificate: ca, auth: { user: "mailer", pass: SECRET } });
  plain = await startSmtpServer({ tls: "none" });
});
afterAll(async () => {
  await relay.close();
  await plain.close();
});

const smtp = (protocol: (typeof PROTOCOLS)[number] = "connect-json-http1") => t.clients.client(SmtpService, protocol, { token: t.server.adminToken });
/** An address of exactly `length` characters. */
const addressOf = (length: number) => {
  const domain = `${"b".repeat(63)}.${"c".repeat(63)}.example.com`;
  return `${"x".repeat(length - domain.length - 1)}@${domain}`;
};
const base = () => ({ senderAddress: "noreply@gatehouse.test", senderName: "Gatehouse", tls: true, host: `localhost:${relay.port}`, user: "mailer" });
const text = (value: unknown) => JSON.stringify(value, (_k, v: unknown) => (typeof v === "bigint" ? String(v) : v));

// Every test starts from the same saved configuration (with its password), whatever ran before it.
beforeEach(async () => {
  await smtp().removeSmtpConfig({}).catch(() => undefined);
  await smtp().createSmtpConfig({ ...base(), password: SECRET });
});

describe("SMTP configuration", () => {
  it("is created once, read without its password, and updated idempotently", async () => {
    await smtp().removeSmtpConfig({});
    await smtp().createSmtpConfig({ ...base(), password: SECRET });
    expect(await failure(smtp().createSmtpConfig(base()))).toMatchObject({ code: Code.AlreadyExists, reason: "smtp.already_exists" });
    const { config } = await smtp().getSmtpConfig({});
    expect(config).toMatchObject({ ...base(), hasPassword: true });
    const first = await smtp().updateSmtpConfig({ ...base(), senderName: "Gatehouse Mail" });
    expect(first.passwordDropped).toBe(false);
    const second = await smtp().updateSmtpConfig({ ...base(), senderName: "Gatehouse Mail" });
    expect(second.details?.sequence).toBe(first.details?.sequence);
    expect((await smtp().getSmtpConfig({})).config?.hasPassword).toBe(true);
  });

  it("tests the saved configuration step by step: STARTTLS with its version, AUTH, the envelope and DATA", async () => {
    const result = await smtp("grpc-h2c").testSmtpConfig({ receiverAddress: "probe@example.com" });
    expect(result.ok).toBe(true);
    expect(result.steps.map((s) => [s.step, s.ok])).toEqual([
      ["connect", true], ["ehlo", true], ["tls", true], ["auth", true], ["mail_from", true], ["rcpt_to", true], ["data", true],
    ]);
    expect(result.tlsVersion).toMatch(/^TLSv1\.[23]$/);
    // The probe really went through: over TLS, logged in as the saved user.
    expect(await relay.waitFor((m) => m.to.includes("probe@example.com"))).toMatchObject({ secure: true, user: "mailer" });
  });

  it("tests an unsaved configuration only with its own password, and reports a failed AUTH", async () => {
    const unsaved = { ...base(), senderName: "Unsaved" };
    expect(await failure(smtp().testSmtpConfig({ receiverAddress: "x@example.com", config: unsaved }))).toMatchObject({
      code: Code.InvalidArgument,
      reason: "smtp.password_required",
      fields: ["password"],
    });
    const wrong = await smtp().testSmtpConfig({ receiverAddress: "x@example.com", config: unsaved, password: "not-the-password" });
    expect(wrong.ok).toBe(false);
    expect(wrong.steps.at(-1)).toMatchObject({ step: "auth", ok: false });
    expect(text(wrong)).not.toContain("not-the-password");
  });

  it("reports a TLS failure instead of sending in clear when the server has no STARTTLS", async () => {
    const result = await smtp().testSmtpConfig({ receiverAddress: "x@example.com", config: { ...base(), host: `127.0.0.1:${plain.port}`, user: "" } });
    expect(result.ok).toBe(false);
    expect(result.steps.at(-1)).toMatchObject({ step: "tls", ok: false });
    expect(plain.received).toHaveLength(0);
  });

  it("drops the password when host or user changes, and says so", async () => {
    const moved = await smtp().updateSmtpConfig({ ...base(), host: `127.0.0.1:${relay.port}` });
    expect(moved.passwordDropped).toBe(true);
    expect((await smtp().getSmtpConfig({})).config?.hasPassword).toBe(false);
    await smtp().setSmtpPassword({ password: SECRET });
    const renamed = await smtp().updateSmtpConfig({ ...base(), host: `127.0.0.1:${relay.port}`, user: "other" });
    expect(renamed.passwordDropped).toBe(true);
    expect((await smtp().getSmtpConfig({})).config?.hasPassword).toBe(false);
  });

  it("never shows the password: not in reads, events, logs or test output", async () => {
    // This test's own password writes and AUTH exchange, so every check below reads what they left.
    const logStart = t.server.logs.lines.length;
    const events = t.clients.client(EventService, "connect-json-http1", { token: t.server.adminToken });
    const since = await lastSequence(events);
    await smtp().setSmtpPassword({ password: SECRET });
    await smtp().updateSmtpConfig({ ...base(), senderName: "Gatehouse Secret Check" });
    const tested = await smtp().testSmtpConfig({ receiverAddress: "probe2@example.com" });
    expect(tested.steps.find((step) => step.step === "auth")?.ok).toBe(true);
    const { events: written } = await events.listEvents({ aggregateType: "smtp", fromSequence: since + 1n });
    expect(written.map((e) => e.eventType)).toEqual(["smtp.password.set", "smtp.changed"]);
    expect(text(written)).not.toContain(SECRET);
    expect(text(await smtp().getSmtpConfig({}))).not.toContain(SECRET);
    expect(text(tested)).not.toContain(SECRET);
    const logged = t.server.logs.lines.slice(logStart).join("\n");
    expect(logged).toContain("/gatehouse.admin.v1.SmtpService/SetSmtpPassword");
    expect(logged).not.toContain(SECRET);
    expect(logged).not.toContain(Buffer.from(SECRET).toString("base64"));
  });

  it("is IAM_OWNER's alone: even an ORG_OWNER gets 403 on every SMTP RPC", async () => {
    const instance = t.clients.client(InstanceService, "connect-json-http1", { token: t.server.adminToken });
    const { defaultOrganizationId, instanceId } = await instance.getInstance({});
    expect((await smtp().getSmtpConfig({})).config?.details?.resourceOwner).toBe(instanceId);
    const owner = await createActor(t.clients, t.server.adminToken, defaultOrganizationId, "org-owner-smtp", ["ORG_OWNER"]);
    const asOwner = t.clients.client(SmtpService, "grpc-web-http1", { token: owner.token });
    // One call at a time: a rejection nobody awaits yet would be reported as unhandled.
    for (const call of [
      () => asOwner.getSmtpConfig({}),
      () => asOwner.updateSmtpConfig(base()),
      () => asOwner.createSmtpConfig(base()),
      () => asOwner.setSmtpPassword({ password: "x" }),
      () => asOwner.testSmtpConfig({ receiverAddress: "a@example.com" }),
      () => asOwner.removeSmtpConfig({}),
    ]) {
      expect(await failure(call())).toMatchObject({ code: Code.PermissionDenied, metadata: { permission: "iam.write" } });
    }
  });
});

describe.each(PROTOCOLS)("UpdateSmtpConfig input (SPEC 4.2, section 8) over %s", (protocol) => {
  const invalid = async (overrides: Partial<ReturnType<typeof base>>, field: string, reason = "request.invalid") =>
    expect(await failure(smtp(protocol).updateSmtpConfig({ ...base(), ...overrides }))).toMatchObject({ code: Code.InvalidArgument, reason, fields: [field] });

  it("accepts 200-character sender fields and both host forms, and saves them as sent", async () => {
    const accepted = async (overrides: Partial<ReturnType<typeof base>>) => {
      await smtp(protocol).updateSmtpConfig({ ...base(), ...overrides });
      expect((await smtp(protocol).getSmtpConfig({})).config).toMatchObject({ ...base(), ...overrides });
    };
    await accepted({ senderAddress: addressOf(200), senderName: "n".repeat(200) });
    await accepted({ host: "[::1]:2525" });
    await accepted({ host: "mail.example.com:587" });
  });

  it("rejects over-long and empty fields", async () => {
    await invalid({ senderAddress: addressOf(201) }, "sender_address");
    await invalid({ senderName: "n".repeat(201) }, "sender_name");
    await invalid({ host: `${"h".repeat(498)}:25` }, "host");
    await invalid({ senderAddress: "" }, "sender_address");
    await invalid({ senderName: "" }, "sender_name");
    await invalid({ host: "" }, "host");
    await invalid({ senderAddress: "not-an-address" }, "sender_address", "email.invalid");
  });

  it.each([
    ["a host without port", "mail.example.com"],
    ["port 0", "mail.example.com:0"],
    ["port 65536", "mail.example.com:65536"],
    ["[::1] without port", "[::1]"],
    ["an unbracketed IPv6 address", "::1:25"],
    ["a non-numeric port", "mail.example.com:smtp"],
    ["a 500-character host name", `${"h".repeat(497)}:25`],
  ])("rejects %s with smtp.host_invalid on host", async (_name, host) => {
    await invalid({ host }, "host", "smtp.host_invalid");
  });
});

describe("without a configuration", () => {
  it("answers not_found after removal", async () => {
    await smtp().removeSmtpConfig({});
    expect(await failure(smtp().getSmtpConfig({}))).toMatchObject({ code: Code.NotFound, reason: "smtp.not_found" });
    expect(await failure(smtp().updateSmtpConfig(base()))).toMatchObject({ code: Code.NotFound, reason: "smtp.not_found" });
    expect(await failure(smtp().testSmtpConfig({ receiverAddress: "a@example.com" }))).toMatchObject({ code: Code.NotFound });
  });
});
