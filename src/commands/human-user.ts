import { selectOrganization } from "../access/select-organization.js";
import type { Caller, Deps } from "../context.js";
import { authorize } from "../domain/authorization.js";
import { normalizeEmail, emailKey, normalizePhone } from "../domain/contact.js";
import { failedPrecondition, invalidArgument } from "../domain/errors.js";
import { defaultDisplayName, initialSetup } from "../domain/human-user.js";
import { parseImportedHash } from "../domain/imported-hash.js";
import { checkUserName, uniquenessKey } from "../domain/names.js";
import { DEFAULT_PASSWORD_POLICY, checkPasswordPolicy } from "../domain/password-policy.js";
import { normalizeTotpSecret } from "../domain/totp-secret.js";
import { detailsOfCreate } from "../events/details.js";
import type { NewEvent } from "../events/event.js";
import { EventType } from "../events/types.js";
import { newOutboxRow } from "../notify/outbox.js";
import { initializationMail, verificationMail } from "../notify/templates.js";
import type { RowWrite } from "../store/commit.js";
import { externalLink } from "../support/links.js";
import { hashPassword } from "../support/password-hash.js";
import { sealSecret } from "../support/secret-box.js";
import { commitAs } from "./commit-as.js";
import { issueCode } from "./one-time-code.js";

export interface CreateHumanUserInput {
  userName: string;
  profile: { firstName: string; lastName: string; nickName: string; displayName: string; preferredLanguage: string; gender: number };
  email: { email: string; isEmailVerified: boolean };
  phone?: { phone: string; isPhoneVerified: boolean };
  password: string;
  hashedPassword?: string;
  passwordChangeRequired: boolean;
  requestPasswordlessRegistration: boolean;
  otpCode: string;
  idps: { configId: string; externalUserId: string; displayName: string }[];
}

export const otpSecretContext = (userId: string) => `user:${userId}:otp_secret`;

/** Checks every IDP link names an IDP the organization may use (its own or the instance's). */
async function checkIdpLinks(deps: Deps, instanceId: string, orgId: string, links: CreateHumanUserInput["idps"]): Promise<void> {
  for (const [index, link] of links.entries()) {
    const idp = await deps.store.findIdentityProviderById(link.configId);
    if (!idp || (idp.ownerId !== orgId && idp.ownerId !== instanceId)) {
      throw failedPrecondition("idp.not_found", `idps[${index}].config_id names no identity provider of the organization or instance`, { configId: link.configId });
    }
  }
}

/**
 * SPEC 4.1. Everything slow or fallible (validation, IDP look-ups, argon2id) happens before the one
 * transaction that writes the user, its links, codes, outbox mail and events.
 */
export async function createHumanUser(deps: Deps, caller: Caller, input: CreateHumanUserInput) {
  const organization = await selectOrganization(deps, caller);
  authorize(caller.principal, "user.write", { orgId: organization.id });
  const instanceId = caller.principal.instanceId;
  checkUserName(input.userName);
  if (input.password && input.hashedPassword !== undefined) {
    throw invalidArgument("password.exclusive", "send either password or hashed_password, not both", [
      { field: "password", description: "cannot be combined with hashed_password", rule: "password.exclusive" },
      { field: "hashed_password", description: "cannot be combined with password", rule: "password.exclusive" },
    ]);
  }
  const email = normalizeEmail(input.email.email);
  const phone = input.phone ? normalizePhone(input.phone.phone) : null;
  const otpSecret = input.otpCode ? normalizeTotpSecret(input.otpCode) : null;
  const imported = input.hashedPassword !== undefined ? parseImportedHash(input.hashedPassword) : undefined;
  if (input.password) {
    const policy = (await deps.store.getPasswordPolicy(instanceId)) ?? DEFAULT_PASSWORD_POLICY;
    checkPasswordPolicy(policy, input.password);
  }
  await checkIdpLinks(deps, instanceId, organization.id, input.idps);
  const passwordHash = input.password ? await hashPassword(input.password) : (input.hashedPassword ?? null);

  const at = deps.clock.now();
  const userId = deps.ids.next();
  // Named, not spread: the API hands in the protobuf message, whose internal keys ($typeName) must reach neither
  // the row nor the audit trail.
  const profile = {
    firstName: input.profile.firstName,
    lastName: input.profile.lastName,
    nickName: input.profile.nickName,
    displayName: input.profile.displayName || defaultDisplayName(input.profile.firstName, input.profile.lastName),
    preferredLanguage: input.profile.preferredLanguage,
    gender: input.profile.gender,
  };
  const setup = initialSetup({
    hasIdpLinks: input.idps.length > 0,
    emailVerified: input.email.isEmailVerified,
    hasPassword: passwordHash !== null,
    passwordless: input.requestPasswordlessRegistration,
  });
  const user = { id: userId, orgId: organization.id };
  const emailCode = setup.emailCode ? issueCode(deps, user, "email", at) : undefined;
  // The initialization mail carries it to `email`: a right init code proves that address (initialize-user.ts).
  const initCode = setup.initCode ? issueCode(deps, user, "init", at, emailKey(email)) : undefined;
  const passwordless = input.requestPasswordlessRegistration ? issueCode(deps, user, "passwordless", at) : undefined;

  const writes: RowWrite[] = [
    {
      kind: "user.insert",
      row: {
        id: userId,
        instanceId,
        orgId: organization.id,
        type: "human",
        state: setup.state,
        userName: input.userName,
        userNameKey: uniquenessKey(input.userName),
        ...profile,
        email,
        emailKey: emailKey(email),
        emailVerified: input.email.isEmailVerified,
        phone,
        // Stryker disable next-line BooleanLiteral,OptionalChaining: a phone is set only from input.phone (so input.phone is there), whose is_phone_verified is a proto bool (never undefined), so the fallback is never taken
        phoneVerified: phone ? (input.phone?.isPhoneVerified ?? false) : null,
        passwordHash,
        passwordChangeRequired: input.passwordChangeRequired,
        otpSecretSealed: otpSecret ? sealSecret(deps.masterKey, otpSecret, otpSecretContext(userId)) : null,
      },
    },
    ...input.idps.map((link) => ({ kind: "userIdpLink.insert" as const, row: { userId, idpId: link.configId, externalUserId: link.externalUserId, displayName: link.displayName } })),
    ...[emailCode, initCode, passwordless].flatMap((code) => (code ? [code.write] : [])),
  ];
  const events: NewEvent[] = [
    {
      aggregateType: "user",
      aggregateId: userId,
      type: EventType.humanUserAdded,
      // No password, hash, OTP secret or code: only what they are.
      payload: {
        userName: input.userName,
        profile,
        email,
        emailVerified: input.email.isEmailVerified,
        phone,
        // Stryker disable next-line BooleanLiteral,OptionalChaining: a phone is set only from input.phone (so input.phone is there), whose is_phone_verified is a proto bool (never undefined), so the fallback is never taken
        phoneVerified: phone ? (input.phone?.isPhoneVerified ?? false) : null,
        password: input.password ? "set" : imported ? `imported:${imported.scheme}` : "none",
        passwordChangeRequired: input.passwordChangeRequired,
        otpConfigured: otpSecret !== null,
        idpLinks: input.idps.map((link) => ({ configId: link.configId, externalUserId: link.externalUserId })),
        state: setup.state,
      },
      resourceOwner: organization.id,
    },
    ...[emailCode, initCode, passwordless].flatMap((code) => (code ? [code.event] : [])),
  ];
  if (setup.mail !== "none") {
    const context = { externalUrl: deps.externalUrl, organizationName: organization.name, organizationId: organization.id, userId, userName: input.userName, displayName: profile.displayName };
    const mail =
      setup.mail === "initialization"
        ? initializationMail(context, { ...(emailCode ? { emailCode: emailCode.code } : {}), ...(initCode ? { initCode: initCode.code } : {}) })
        : verificationMail(context, emailCode!.code);
    const outboxId = deps.ids.next();
    const template = `user.${setup.mail}`;
    writes.push({ kind: "outbox.insert", row: newOutboxRow(deps.masterKey, { id: outboxId, instanceId, userId, template, recipient: email, mail, at }) });
    events.push({ aggregateType: "user", aggregateId: userId, type: EventType.userNotificationQueued, payload: { template, outboxId }, resourceOwner: organization.id });
  }
  const committed = await commitAs(deps, caller, { writes, events }, at);
  return {
    userId,
    details: detailsOfCreate(committed),
    ...(passwordless
      ? {
          passwordless: {
            link: externalLink(deps.externalUrl, "/ui/login/passwordless/init", { userID: userId, orgID: organization.id, codeID: passwordless.id, code: passwordless.code }),
            expiresInSeconds: Math.round((passwordless.expiresAt.getTime() - at.getTime()) / 1000),
          },
        }
      : {}),
  };
}

