import { selectOrganization } from "../access/select-organization.js";
import type { Caller, Deps } from "../context.js";
import { authorize } from "../domain/authorization.js";
import { normalizeEmail, emailKey, normalizePhone } from "../domain/contact.js";
import { failedPrecondition, invalidArgument } from "../domain/errors.js";
import { defaultDisplayName, initialSetup } from "../domain/human-user.js";
import { type ImportedHash, parseImportedHash } from "../domain/imported-hash.js";
import { checkUserName, uniquenessKey } from "../domain/names.js";
import { DEFAULT_PASSWORD_POLICY, type PasswordPolicy, checkPasswordPolicy } from "../domain/password-policy.js";
import { normalizeTotpSecret } from "../domain/totp-secret.js";
import { detailsOfCreate } from "../events/details.js";
import type { NewEvent } from "../events/event.js";
import { EventType } from "../events/types.js";
import { newOutboxRow } from "../notify/outbox.js";
import { initializationMail, verificationMail } from "../notify/templates.js";
import type { RowWrite } from "../store/commit.js";
import type { IdentityProviderRow, OrganizationRow } from "../store/rows.js";
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

/**
 * What the checks of a new human user read from the store, read before them: for one user (CreateHumanUser) or for a
 * whole chunk of an import at once, so the checks themselves are synchronous and the same for both.
 */
export interface HumanUserLookups {
  instanceId: string;
  orgId: string;
  /** The instance's password policy (the default when none is stored); read only when a user brings a password. */
  passwordPolicy: PasswordPolicy;
  /** The identity providers the users' links name, by id (an unknown id is absent). */
  identityProviders: ReadonlyMap<string, IdentityProviderRow>;
}

/** Reads what the checks of `inputs` need: the password policy if any has a password, every IDP their links name. */
export async function lookUpForHumanUsers(deps: Deps, instanceId: string, orgId: string, inputs: readonly CreateHumanUserInput[]): Promise<HumanUserLookups> {
  const passwordPolicy = inputs.some((input) => input.password) ? ((await deps.store.getPasswordPolicy(instanceId)) ?? DEFAULT_PASSWORD_POLICY) : DEFAULT_PASSWORD_POLICY;
  const identityProviders = new Map<string, IdentityProviderRow>();
  for (const configId of new Set(inputs.flatMap((input) => input.idps.map((link) => link.configId)))) {
    const idp = await deps.store.findIdentityProviderById(configId);
    // (An absent id and one mapped to undefined read the same with get: the `true` mutant is equivalent.)
    if (idp) identityProviders.set(configId, idp);
  }
  return { instanceId, orgId, passwordPolicy, identityProviders };
}

/** A user that passed every check of CreateHumanUser, with its values as they will be stored. */
export interface CheckedHumanUser {
  input: CreateHumanUserInput;
  userNameKey: string;
  email: string;
  phone: string | null;
  otpSecret: string | null;
  imported: ImportedHash | undefined;
}

/**
 * Every check CreateHumanUser makes of a user, in its order (the first broken rule is the error): the user name, not
 * both password and hash, the email, phone, OTP secret and imported hash, the password policy, the IDP links (each
 * must name an IDP of the organization or the instance). The one place these rules live: the bulk import checks each
 * of its users here too.
 */
export function checkHumanUser(input: CreateHumanUserInput, lookups: HumanUserLookups): CheckedHumanUser {
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
  if (input.password) checkPasswordPolicy(lookups.passwordPolicy, input.password);
  for (const [index, link] of input.idps.entries()) {
    const idp = lookups.identityProviders.get(link.configId);
    if (!idp || (idp.ownerId !== lookups.orgId && idp.ownerId !== lookups.instanceId)) {
      throw failedPrecondition("idp.not_found", `idps[${index}].config_id names no identity provider of the organization or instance`, { configId: link.configId });
    }
  }
  return { input, userNameKey: uniquenessKey(input.userName), email, phone, otpSecret, imported };
}

/**
 * The profile as stored and logged. Named, not spread: the API hands in the protobuf message, whose internal keys
 * ($typeName) must reach neither the row nor the audit trail.
 */
export function storedProfile(profile: CreateHumanUserInput["profile"]) {
  return {
    firstName: profile.firstName,
    lastName: profile.lastName,
    nickName: profile.nickName,
    displayName: profile.displayName || defaultDisplayName(profile.firstName, profile.lastName),
    preferredLanguage: profile.preferredLanguage,
    gender: profile.gender,
  };
}

/** Where and how a new user is written: its organization, the time, and whether it is sent the mails of its setup. */
export interface NewHumanUserContext {
  instanceId: string;
  organization: OrganizationRow;
  at: Date;
  /**
   * False for an import that did not ask for mails: no initialization or verification mail is queued, and no code is
   * issued that only such a mail would carry. The user starts in the same state all the same.
   */
  mails: boolean;
  /** The user's id in the system it is imported from (ImportHumanUsers), or null. */
  externalId: string | null;
}

/**
 * The writes and events that create a checked user (`passwordHash`: argon2id of its password, its imported hash, or
 * null): the user row, its IDP links, its codes, its mail and their events — one commit's worth, built without I/O.
 */
export function newHumanUser(deps: Deps, context: NewHumanUserContext, checked: CheckedHumanUser, passwordHash: string | null) {
  const { input, email, phone, otpSecret, imported } = checked;
  const { instanceId, organization, at } = context;
  const userId = deps.ids.next();
  const profile = storedProfile(input.profile);
  const setup = initialSetup({
    hasIdpLinks: input.idps.length > 0,
    emailVerified: input.email.isEmailVerified,
    hasPassword: passwordHash !== null,
    passwordless: input.requestPasswordlessRegistration,
  });
  const user = { id: userId, orgId: organization.id };
  const emailCode = context.mails && setup.emailCode ? issueCode(deps, user, "email", at) : undefined;
  // The initialization mail carries it to `email`: a right init code proves that address (initialize-user.ts).
  const initCode = context.mails && setup.initCode ? issueCode(deps, user, "init", at, emailKey(email)) : undefined;
  const passwordless = input.requestPasswordlessRegistration ? issueCode(deps, user, "passwordless", at) : undefined;
  // Stryker disable next-line BooleanLiteral,OptionalChaining: a phone is set only from input.phone (so input.phone is there), whose is_phone_verified is a proto bool (never undefined), so the fallback is never taken
  const phoneVerified = phone ? (input.phone?.isPhoneVerified ?? false) : null;

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
        userNameKey: checked.userNameKey,
        ...profile,
        email,
        emailKey: emailKey(email),
        emailVerified: input.email.isEmailVerified,
        phone,
        phoneVerified,
        passwordHash,
        passwordChangeRequired: input.passwordChangeRequired,
        otpSecretSealed: otpSecret ? sealSecret(deps.masterKey, otpSecret, otpSecretContext(userId)) : null,
        externalId: context.externalId,
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
        phoneVerified,
        password: input.password ? "set" : imported ? `imported:${imported.scheme}` : "none",
        passwordChangeRequired: input.passwordChangeRequired,
        otpConfigured: otpSecret !== null,
        idpLinks: input.idps.map((link) => ({ configId: link.configId, externalUserId: link.externalUserId })),
        state: setup.state,
        ...(context.externalId !== null ? { externalId: context.externalId } : {}),
      },
      resourceOwner: organization.id,
    },
    ...[emailCode, initCode, passwordless].flatMap((code) => (code ? [code.event] : [])),
  ];
  if (context.mails && setup.mail !== "none") {
    const mailContext = { externalUrl: deps.externalUrl, organizationName: organization.name, organizationId: organization.id, userId, userName: input.userName, displayName: profile.displayName };
    const mail =
      setup.mail === "initialization"
        ? initializationMail(mailContext, { ...(emailCode ? { emailCode: emailCode.code } : {}), ...(initCode ? { initCode: initCode.code } : {}) })
        : verificationMail(mailContext, emailCode!.code);
    const outboxId = deps.ids.next();
    const template = `user.${setup.mail}`;
    writes.push({ kind: "outbox.insert", row: newOutboxRow(deps.masterKey, { id: outboxId, instanceId, userId, template, recipient: email, mail, at }) });
    events.push({ aggregateType: "user", aggregateId: userId, type: EventType.userNotificationQueued, payload: { template, outboxId }, resourceOwner: organization.id });
  }
  return { userId, writes, events, passwordless };
}

/**
 * SPEC 4.1. Everything slow or fallible (validation, IDP look-ups, argon2id) happens before the one
 * transaction that writes the user, its links, codes, outbox mail and events.
 */
export async function createHumanUser(deps: Deps, caller: Caller, input: CreateHumanUserInput) {
  const organization = await selectOrganization(deps, caller);
  authorize(caller.principal, "user.write", { orgId: organization.id });
  const instanceId = caller.principal.instanceId;
  const checked = checkHumanUser(input, await lookUpForHumanUsers(deps, instanceId, organization.id, [input]));
  const passwordHash = input.password ? await hashPassword(input.password) : (input.hashedPassword ?? null);
  const at = deps.clock.now();
  const created = newHumanUser(deps, { instanceId, organization, at, mails: true, externalId: null }, checked, passwordHash);
  const committed = await commitAs(deps, caller, { writes: created.writes, events: created.events }, at);
  const { userId, passwordless } = created;
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
