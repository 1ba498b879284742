import { Code } from "@connectrpc/connect";
import { readFileSync } from "node:fs";
import { beforeAll, describe, expect, it } from "vitest";
import { EventService } from "../../gen/gatehouse/admin/v1/event_pb.js";
import { IdentityProviderService } from "../../gen/gatehouse/admin/v1/identity_provider_pb.js";
import { OrganizationService } from "../../gen/gatehouse/admin/v1/organization_pb.js";
import { UserService, UserState } from "../../gen/gatehouse/admin/v1/user_pb.js";
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { CreateHumanUserRequestSchema } from "../../gen/gatehouse/admin/v1/user_pb.js";
import { codeDigest } from "../../src/domain/codes.js";
import { PROTOCOLS, type Protocol } from "../support/clients.js";
import { failure } from "../support/errors.js";
import { emailCodeIn, lastMailTo, queuedMails } from "../support/outbox.js";
import { useTestServer } from "../support/server.js";
import { storedRow } from "../support/stored-rows.js";

const t = useTestServer();
type Request = MessageInitShape<typeof CreateHumanUserRequestSchema>;
const fixtures = JSON.parse(readFileSync(new URL("../fixtures/password-hashes/hashes.json", import.meta.url), "utf8")) as {
  password: string;
  hashes: { scheme: string; source: string; hash: string }[];
};

let n = 0;
const unique = (prefix: string) => `${prefix}-${++n}`;
const human = (overrides: Partial<Request> = {}): Request => {
  const name = unique("user");
  return { userName: name, profile: { firstName: "Ada", lastName: "Lovelace" }, email: { email: `${name}@example.com` }, ...overrides } as Request;
};
const users = (protocol: Protocol = "connect-json-http1", orgId?: string) => t.clients.client(UserService, protocol, { token: t.server.adminToken, ...(orgId ? { orgId } : {}) });
const eventsOf = async (userId: string) =>
  (await t.clients.client(EventService, "connect-json-http1", { token: t.server.adminToken }).listEvents({ aggregateId: userId })).events;
const text = (value: unknown) => JSON.stringify(value, (_k, v: unknown) => (typeof v === "bigint" ? String(v) : v));

describe.each(PROTOCOLS)("CreateHumanUser limits (SPEC section 8) over %s", (protocol) => {
  const invalid = async (request: Request, field: string) => {
    const error = await failure(users(protocol).createHumanUser(request));
    expect(error).toMatchObject({ code: Code.InvalidArgument, fields: [field] });
  };

  it("accepts every limited field at its maximum", async () => {
    const { userId } = await users(protocol).createHumanUser(
      human({
        profile: { firstName: "f".repeat(200), lastName: "l".repeat(200), nickName: "n".repeat(200), displayName: "d".repeat(200), preferredLanguage: "de-CH-1901" },
        phone: { phone: "+41 44 668 18 00".padEnd(50, " ") },
      }),
    );
    expect(userId).not.toBe("");
  });

  it("rejects one character more, and empty required fields, naming the field", async () => {
    await invalid(human({ profile: { firstName: "f".repeat(201), lastName: "l" } }), "profile.first_name");
    await invalid(human({ profile: { firstName: "f", lastName: "l".repeat(201) } }), "profile.last_name");
    await invalid(human({ profile: { firstName: "f", lastName: "l", nickName: "n".repeat(201) } }), "profile.nick_name");
    await invalid(human({ profile: { firstName: "f", lastName: "l", displayName: "d".repeat(201) } }), "profile.display_name");
    await invalid(human({ profile: { firstName: "f", lastName: "l", preferredLanguage: "x".repeat(11) } }), "profile.preferred_language");
    await invalid(human({ phone: { phone: "+".padEnd(51, "1") } }), "phone.phone");
    await invalid(human({ phone: { phone: "" } }), "phone.phone");
    await invalid(human({ profile: { firstName: "", lastName: "l" } }), "profile.first_name");
    await invalid(human({ profile: { firstName: "f", lastName: "" } }), "profile.last_name");
    await invalid(human({ email: { email: "" } }), "email.email");
    await invalid(human({ userName: "" }), "user_name");
    await invalid(human({ idps: [{ configId: "c".repeat(201), externalUserId: "e" }] }), "idps[0].config_id");
    await invalid(human({ idps: [{ configId: "c", externalUserId: "e".repeat(201) }] }), "idps[0].external_user_id");
    await invalid(human({ idps: [{ configId: "c", externalUserId: "e", displayName: "d".repeat(201) }] }), "idps[0].display_name");
    await invalid(human({ idps: [{ configId: "", externalUserId: "e" }] }), "idps[0].config_id");
  });
});

describe("CreateHumanUser rules", () => {
  it("keeps user names unique per instance, case-insensitively, across organizations", async () => {
    const { organizationId } = await t.clients.client(OrganizationService, "connect-json-http1", { token: t.server.adminToken }).createOrganization({ name: "Second" });
    await users().createHumanUser(human({ userName: "Grace" }));
    expect(await failure(users().createHumanUser(human({ userName: "grace" })))).toMatchObject({ code: Code.AlreadyExists, reason: "user.already_exists" });
    expect(await failure(users("grpc-h2c", organizationId).createHumanUser(human({ userName: "GRACE" })))).toMatchObject({ code: Code.AlreadyExists });
  });

  it("lets exactly one of two concurrent creates of the same user name succeed", async () => {
    const results = await Promise.allSettled([
      users("grpc-h2c").createHumanUser(human({ userName: "race", password: "Sup3r-secret!" })),
      users("connect-json-http1").createHumanUser(human({ userName: "RACE", password: "Sup3r-secret!" })),
    ]);
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
  });

  it("trims the email and rejects an invalid one", async () => {
    const { userId } = await users().createHumanUser(human({ email: { email: "  trimmed@example.com " } }));
    expect((await users().getUser({ userId })).user?.type).toMatchObject({ case: "human", value: { email: { email: "trimmed@example.com" } } });
    expect(await failure(users().createHumanUser(human({ email: { email: "not an email" } })))).toMatchObject({ code: Code.InvalidArgument, reason: "email.invalid", fields: ["email.email"] });
  });

  it.each([
    ["spaces", "+41 44 668 18 00", "+41446681800"],
    ["dashes", "+1-415-555-2671", "+14155552671"],
  ])("stores a phone with %s as E.164", async (_name, phone, e164) => {
    const { userId } = await users().createHumanUser(human({ phone: { phone, isPhoneVerified: true } }));
    const { user } = await users().getUser({ userId });
    expect(user?.type).toMatchObject({ case: "human", value: { phone: { phone: e164, isPhoneVerified: true } } });
  });

  it.each([
    ["a national number without +", "044 668 18 00"],
    ["an impossible number", "+41 12"],
  ])("rejects %s", async (_name, phone) => {
    expect(await failure(users().createHumanUser(human({ phone: { phone } })))).toMatchObject({ code: Code.InvalidArgument, reason: "phone.invalid", fields: ["phone.phone"] });
  });

  it("checks the password policy, naming every failed rule, and refuses password with hashed_password", async () => {
    const weak = await failure(users().createHumanUser(human({ password: "short" })));
    expect(weak).toMatchObject({ code: Code.InvalidArgument, reason: "password.policy" });
    expect(weak.rules).toEqual(["password.policy.min_length", "password.policy.uppercase", "password.policy.digit", "password.policy.symbol"]);
    const both = await failure(users().createHumanUser(human({ password: "Sup3r-secret!", hashedPassword: { value: fixtures.hashes[0]!.hash } })));
    // Both fields are named, each with the rule it breaks together with the other.
    expect(both).toMatchObject({ code: Code.InvalidArgument, reason: "password.exclusive", fields: ["password", "hashed_password"], rules: ["password.exclusive", "password.exclusive"] });
  });

  it("hashes a plain password with argon2id and stores an imported hash as given", async () => {
    const hashOf = async (userId: string) => (await storedRow<{ h: string }>(t.server, "select password_hash as h from users where id = ?", userId)).h;
    const { userId: plain } = await users().createHumanUser(human({ password: "Sup3r-secret!" }));
    expect(await hashOf(plain)).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
    for (const fixture of fixtures.hashes) {
      const { userId } = await users("grpc-h2c").createHumanUser(human({ hashedPassword: { value: fixture.hash } }));
      expect(await hashOf(userId)).toBe(fixture.hash);
      const { user } = await users().getUser({ userId });
      expect(user?.type).toMatchObject({ case: "human", value: { hasPassword: true } });
      expect(text(user)).not.toContain(fixture.hash);
      expect(text(await eventsOf(userId))).not.toContain(fixture.hash.slice(-20));
    }
    expect(t.server.logs.text).not.toContain("Sup3r-secret!");
    for (const fixture of fixtures.hashes) expect(t.server.logs.text).not.toContain(fixture.hash.slice(-20));
  });

  it("stores password_change_required as given and shows the profile, never a secret", async () => {
    const { userId } = await users().createHumanUser(
      human({ profile: { firstName: "Ada", lastName: "Lovelace", nickName: "Countess", preferredLanguage: "en", gender: 1 }, password: "Sup3r-secret!", passwordChangeRequired: true }),
    );
    const { user } = await users().getUser({ userId });
    expect(user?.type).toMatchObject({
      case: "human",
      value: { profile: { nickName: "Countess", displayName: "Ada Lovelace", preferredLanguage: "en", gender: 1 }, hasPassword: true, passwordChangeRequired: true, otpConfigured: false },
    });
    expect(text(user)).not.toMatch(/argon2|Sup3r/);
  });

  it("rejects unsupported and malformed hashes on hashed_password.value", async () => {
    const unsupported = await failure(users().createHumanUser(human({ hashedPassword: { value: "{SSHA}abc" } })));
    expect(unsupported).toMatchObject({ code: Code.InvalidArgument, reason: "hashed_password.unsupported", fields: ["hashed_password.value"] });
    const malformed = await failure(users().createHumanUser(human({ hashedPassword: { value: "$2b$03$abc" } })));
    expect(malformed).toMatchObject({ code: Code.InvalidArgument, reason: "hashed_password.malformed", fields: ["hashed_password.value"] });
  });

  it("imports a TOTP secret sealed, and rejects one that is not base32", async () => {
    const { userId } = await users().createHumanUser(human({ otpCode: "JBSWY3DPEHPK3PXP" }));
    expect((await users().getUser({ userId })).user?.type).toMatchObject({ case: "human", value: { otpConfigured: true } });
    const row = await storedRow<{ s: string }>(t.server, "select otp_secret_sealed as s from users where id = ?", userId);
    expect(row.s).toMatch(/^v1\./);
    expect(row.s).not.toContain("JBSWY3DPEHPK3PXP");
    expect(await failure(users().createHumanUser(human({ otpCode: "not-base32!" })))).toMatchObject({ reason: "otp.invalid", fields: ["otp_code"] });
  });

  it("links IDPs of the organization or instance only, and each external account to one user", async () => {
    const idps = t.clients.client(IdentityProviderService, "connect-json-http1", { token: t.server.adminToken });
    const { idpId } = await idps.createIdentityProvider({ name: "Linkable", issuer: "https://idp.example.com", clientId: "c", clientSecret: "s" });
    const { idpId: instanceIdp } = await idps.createIdentityProvider({ name: "Instance linkable", issuer: "https://idp.example.com", clientId: "c", clientSecret: "s", instanceLevel: true });
    const { organizationId } = await t.clients.client(OrganizationService, "connect-json-http1", { token: t.server.adminToken }).createOrganization({ name: "IDP elsewhere" });
    const { idpId: foreignIdp } = await t.clients
      .client(IdentityProviderService, "connect-json-http1", { token: t.server.adminToken, orgId: organizationId })
      .createIdentityProvider({ name: "Foreign", issuer: "https://idp.example.com", clientId: "c", clientSecret: "s" });

    const { userId } = await users().createHumanUser(human({ idps: [{ configId: idpId, externalUserId: "ext-1", displayName: "Ada at IDP" }, { configId: instanceIdp, externalUserId: "ext-1" }] }));
    const { user } = await users().getUser({ userId });
    expect(user?.type.case === "human" && user.type.value.idpLinks.map((l) => l.configId)).toEqual([idpId, instanceIdp]);
    expect(await failure(users().createHumanUser(human({ idps: [{ configId: idpId, externalUserId: "ext-1" }] })))).toMatchObject({ code: Code.AlreadyExists, reason: "user.idp_link.already_exists" });
    expect(await failure(users().createHumanUser(human({ idps: [{ configId: foreignIdp, externalUserId: "x" }] })))).toMatchObject({ code: Code.FailedPrecondition, reason: "idp.not_found" });
    expect(await failure(users().createHumanUser(human({ idps: [{ configId: "nope", externalUserId: "x" }] })))).toMatchObject({ code: Code.FailedPrecondition, reason: "idp.not_found" });
  });

  it("returns a passwordless registration link whose code is stored only as a digest", async () => {
    const { userId, passwordlessRegistration, details } = await users("grpc-h2c").createHumanUser(human({ email: { email: `${unique("pl")}@example.com`, isEmailVerified: true }, requestPasswordlessRegistration: true }));
    expect(passwordlessRegistration?.expiration?.seconds).toBe(3600n);
    expect(passwordlessRegistration?.lifetime).toEqual(passwordlessRegistration?.expiration);
    const link = new URL(passwordlessRegistration!.link);
    expect(link.pathname).toBe("/ui/login/passwordless/init");
    expect(link.searchParams.get("userID")).toBe(userId);
    expect(link.searchParams.get("orgID")).toBe(details?.resourceOwner);
    expect(link.searchParams.get("code")).toMatch(/^[A-Z0-9]{12}$/);
    const row = await storedRow<{ id: string; digest: string; e: number }>(t.server, "select id, digest, expires_at as e from one_time_codes where user_id = ? and kind = 'passwordless'", userId);
    expect(row.id).toBe(link.searchParams.get("codeID"));
    // The stored value is the keyed digest of the mailed code (so never the code itself).
    expect(row.digest).toBe(codeDigest(t.server.gatehouse.deps.masterKey, "passwordless", row.id, link.searchParams.get("code")!));
    expect(row.e).toBe(t.server.clock.now().getTime() + 3_600_000);
  });
});

describe("initial state, mails and events", () => {
  const cases: [string, Partial<Request>, UserState, string | undefined, { emailCode: boolean; setPassword: boolean }][] = [
    ["unverified email, password", { password: "Sup3r-secret!" }, UserState.INITIAL, "user.initialization", { emailCode: true, setPassword: false }],
    ["unverified email, no password", {}, UserState.INITIAL, "user.initialization", { emailCode: true, setPassword: true }],
    ["verified email, password", { password: "Sup3r-secret!", verified: true } as never, UserState.ACTIVE, undefined, { emailCode: false, setPassword: false }],
    ["unverified email, imported hash", { hashedPassword: { value: fixtures.hashes[3]!.hash } }, UserState.INITIAL, "user.initialization", { emailCode: true, setPassword: false }],
    ["verified email, imported hash", { hashedPassword: { value: fixtures.hashes[3]!.hash }, verified: true } as never, UserState.ACTIVE, undefined, { emailCode: false, setPassword: false }],
    ["verified email, no password", { verified: true } as never, UserState.INITIAL, "user.initialization", { emailCode: false, setPassword: true }],
    ["verified email, passwordless", { requestPasswordlessRegistration: true, verified: true } as never, UserState.ACTIVE, undefined, { emailCode: false, setPassword: false }],
    ["unverified email, passwordless", { requestPasswordlessRegistration: true }, UserState.INITIAL, "user.initialization", { emailCode: true, setPassword: true }],
    ["IDP link, unverified email", { idp: true } as never, UserState.ACTIVE, "user.verification", { emailCode: true, setPassword: false }],
    ["IDP link, verified email", { idp: true, verified: true } as never, UserState.ACTIVE, undefined, { emailCode: false, setPassword: false }],
  ];
  let idpId: string;
  beforeAll(async () => {
    ({ idpId } = await t.clients
      .client(IdentityProviderService, "connect-json-http1", { token: t.server.adminToken })
      .createIdentityProvider({ name: "State IDP", issuer: "https://idp.example.com", clientId: "c", clientSecret: "s" }));
  });

  it.each(cases)("%s → state, mail and events", async (_name, options, state, template, content) => {
    const { verified, idp, ...rest } = options as Partial<Request> & { verified?: boolean; idp?: boolean };
    const request = human(rest);
    request.email = { email: (request.email as { email: string }).email, isEmailVerified: verified ?? false };
    if (idp) request.idps = [{ configId: idpId, externalUserId: unique("ext") }];
    const { userId } = await users().createHumanUser(request);
    const { user } = await users().getUser({ userId });
    expect(user?.state).toBe(state);
    const mail = await lastMailTo(t.server, (request.email as { email: string }).email);
    expect(mail?.template).toBe(template);
    if (mail) {
      expect(Boolean(emailCodeIn(mail))).toBe(content.emailCode);
      expect(mail.text.includes("/ui/login/user/init?")).toBe(content.setPassword);
      expect(mail.html).toContain("Gatehouse");
      expect(mail.text).toContain("http://127.0.0.1:");
    }
    const types = (await eventsOf(userId)).map((e) => e.eventType);
    expect(types[0]).toBe("user.human.added");
    expect(types.includes("user.notification.queued")).toBe(template !== undefined);
  });

  it("escapes names in the HTML mail", async () => {
    const request = human({ profile: { firstName: "<script>", lastName: "x" } });
    await users().createHumanUser(request);
    const mail = (await queuedMails(t.server)).find((m) => m.recipient === (request.email as { email: string }).email)!;
    expect(mail.html).toContain("&lt;script&gt;");
    expect(mail.html).not.toContain("<script>");
  });
});
