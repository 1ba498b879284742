import { beforeAll, describe, expect, it } from "vitest";
import { IdentityProviderService } from "../../gen/gatehouse/admin/v1/identity_provider_pb.js";
import { OrganizationService } from "../../gen/gatehouse/admin/v1/organization_pb.js";
import { UserService } from "../../gen/gatehouse/admin/v1/user_pb.js";
import { createHumanUser, type CreateHumanUserInput, lookUpForHumanUsers, otpSecretContext } from "../../src/commands/human-user.js";
import type { Caller, Deps } from "../../src/context.js";
import type { DomainError } from "../../src/domain/errors.js";
import type { PasswordPolicy } from "../../src/domain/password-policy.js";
import type { Store } from "../../src/store/store.js";
import { openSecret } from "../../src/support/secret-box.js";
import { emailCodeIn, lastMailTo } from "../support/outbox.js";
import { useTestServer } from "../support/server.js";
import { adminCaller, typed } from "./rules-support.js";

/**
 * CreateHumanUser's rules beyond validation (API.md "Create user", user.proto): the password is
 * checked against the instance's password policy; an imported OTP secret is sealed for its user
 * only; a user with IDP links and an unverified email gets a verification mail, not an
 * initialization mail.
 */
const t = useTestServer();
let orgId: string;
let caller: Caller;
let n = 0;

beforeAll(async () => {
  ({ organizationId: orgId } = await t.clients.client(OrganizationService, "connect-json-http1", { token: t.server.adminToken }).createOrganization({ name: "Human user rules" }));
  caller = await adminCaller(t, orgId);
});

const users = () => t.clients.client(UserService, "connect-json-http1", { token: t.server.adminToken, orgId });

/** A create request in-process, with a fresh user name and address. */
function human(overrides: Partial<CreateHumanUserInput> = {}): CreateHumanUserInput {
  n += 1;
  return {
    userName: `rules-human-${n}`,
    profile: { firstName: "Rule", lastName: `Human ${n}`, nickName: "", displayName: "", preferredLanguage: "", gender: 0 },
    email: { email: `rules-human-${n}@example.com`, isEmailVerified: true },
    password: "",
    passwordChangeRequired: false,
    requestPasswordlessRegistration: false,
    otpCode: "",
    idps: [],
    ...overrides,
  };
}

/** The server's deps, with a store that holds `policy` (or none) as the instance's password policy. */
function withPolicy(policy: PasswordPolicy | undefined): Deps {
  const store = t.server.gatehouse.deps.store;
  const changed = new Proxy(store, {
    get(target, property, receiver) {
      if (property === "getPasswordPolicy") return async () => policy;
      const value = Reflect.get(target, property, receiver) as unknown;
      return typeof value === "function" ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  }) as Store;
  return { ...t.server.gatehouse.deps, store: changed };
}

const refusal = (call: Promise<unknown>) => call.then(() => expect.fail("the password should be refused"), (error: unknown) => error as DomainError);

describe("the password of a new user", () => {
  it("is checked against the instance's password policy as it is stored, not a built-in one", async () => {
    const strict = { minLength: 20, requireUppercase: true, requireLowercase: true, requireDigit: true, requireSymbol: true };
    const error = await refusal(createHumanUser(withPolicy(strict), caller, human({ password: "Sup3r-secret!" })));
    expect(typed(error)).toMatchObject({ kind: "invalid_argument", reason: "password.policy" });
    expect(error.violations.map((v) => v.rule)).toEqual(["password.policy.min_length"]);

    const lax = { minLength: 4, requireUppercase: false, requireLowercase: false, requireDigit: false, requireSymbol: false };
    const { userId } = await createHumanUser(withPolicy(lax), caller, human({ password: "easy" }));
    expect((await users().getUser({ userId })).user?.userId).toBe(userId);
  });

  it("of any user of a batch (an import) is checked against the stored policy, even when the others bring none", async () => {
    const strict = { minLength: 20, requireUppercase: true, requireLowercase: true, requireDigit: true, requireSymbol: true };
    const lookups = await lookUpForHumanUsers(withPolicy(strict), caller.principal.instanceId, orgId, [human(), human({ password: "Sup3r-secret!" })]);
    expect(lookups.passwordPolicy).toEqual(strict);
  });

  it("is checked against the default policy (8 characters, upper, lower, digit, symbol) when the instance has none stored", async () => {
    const error = await refusal(createHumanUser(withPolicy(undefined), caller, human({ password: "lowercase-only" })));
    expect(typed(error)).toMatchObject({ kind: "invalid_argument", reason: "password.policy" });
    expect(error.violations.map((v) => v.rule)).toEqual(["password.policy.uppercase", "password.policy.digit"]);
    const { userId } = await createHumanUser(withPolicy(undefined), caller, human({ password: "Sup3r-secret!" }));
    expect((await users().getUser({ userId })).user?.userId).toBe(userId);
  });
});

describe("an imported OTP secret", () => {
  it("is sealed for its own user: the sealed value opens as that user's secret and not as another user's (a copied value is useless)", async () => {
    const { userId: first } = await createHumanUser(t.server.gatehouse.deps, caller, human({ otpCode: "jbsw y3dp ehpk 3pxp" }));
    const { userId: second } = await createHumanUser(t.server.gatehouse.deps, caller, human({ otpCode: "KRSXG5CTMVRXEZLU" }));
    const { store, masterKey } = t.server.gatehouse.deps;
    const sealed = (await store.findUserById(first))?.otpSecretSealed;
    expect(sealed).toEqual(expect.any(String));
    expect(openSecret(masterKey, sealed!, otpSecretContext(first))).toBe("JBSWY3DPEHPK3PXP");
    expect(() => openSecret(masterKey, sealed!, otpSecretContext(second))).toThrow();
  });
});

describe("the mail a new user gets", () => {
  it("with an IDP link and an unverified email is the verification mail (as ResendEmailCode sends), not an initialization mail", async () => {
    const { idpId } = await t.clients
      .client(IdentityProviderService, "connect-json-http1", { token: t.server.adminToken, orgId })
      .createIdentityProvider({ name: "Rules IDP", issuer: "https://idp.example.com", clientId: "c", clientSecret: "s3cret-value" });
    const linked = human({ email: { email: "linked@example.com", isEmailVerified: false }, idps: [{ configId: idpId, externalUserId: "ext-rules-1", displayName: "" }] });
    const { userId } = await createHumanUser(t.server.gatehouse.deps, caller, linked);
    const atCreation = await lastMailTo(t.server, "linked@example.com");
    expect(atCreation?.template).toBe("user.verification");
    expect(emailCodeIn(atCreation!)).toMatch(/^[A-Z0-9]{6}$/);

    await users().resendEmailCode({ userId });
    const resent = await lastMailTo(t.server, "linked@example.com");
    expect(resent?.subject).toBe(atCreation?.subject);

    // An initial user (no IDP link) gets the other kind of mail.
    await createHumanUser(t.server.gatehouse.deps, caller, human({ email: { email: "initial@example.com", isEmailVerified: false } }));
    const initialization = await lastMailTo(t.server, "initial@example.com");
    expect(initialization?.template).toBe("user.initialization");
    expect(initialization?.subject).not.toBe(atCreation?.subject);
  });
});
