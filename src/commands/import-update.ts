import { emailKey } from "../domain/contact.js";
import type { NewEvent } from "../events/event.js";
import { EventType } from "../events/types.js";
import type { ImportedUserFields, RowWrite } from "../store/commit.js";
import type { UserRow } from "../store/rows.js";
import { type CheckedHumanUser, storedProfile } from "./human-user.js";
import { hashImportedPassword, isStoredPassword } from "./import-passwords.js";

/**
 * The hash a re-import sets (ON_CONFLICT_UPDATE), or undefined to keep the stored one: an imported hash replaces it
 * when the strings differ; a plain password when it is not the one the stored hash was made from (verified, so a re-run
 * with the same password changes nothing); a user without either keeps its password.
 */
export async function reimportedPasswordHash(user: UserRow, checked: CheckedHumanUser, signal?: AbortSignal): Promise<string | undefined> {
  const { password, hashedPassword } = checked.input;
  if (hashedPassword !== undefined) return hashedPassword === user.passwordHash ? undefined : hashedPassword;
  if (!password) return undefined;
  // (Without a stored hash the verifier would refuse to read one, which counts as another password too: the check only
  // saves that call, so its `true` mutant is equivalent.)
  if (user.passwordHash !== null && (await isStoredPassword(user.passwordHash, password, user.orgId, signal))) return undefined;
  return hashImportedPassword(password, signal);
}

/** What a re-import changes: the write and the event, or undefined when the user has every value already. */
export interface Reimport {
  writes: RowWrite[];
  event: NewEvent;
}

/**
 * The re-import of `user` from `checked` (ON_CONFLICT_UPDATE): profile, email and phone are replaced (a phone not given
 * is removed); an address that stays the same keeps its verification (a re-run of an old file must not undo one); a
 * changed email voids the pending email code (it went to the old address); `passwordHash` (reimportedPasswordHash) is
 * set when given, and then voids a pending init code; an external id is set on a user that had none; an INITIAL user
 * that now has a verified email and a password becomes ACTIVE. Undefined when nothing would change: no write, no event.
 */
export function reimportOf(user: UserRow, checked: CheckedHumanUser, externalId: string, passwordHash: string | undefined): Reimport | undefined {
  const { input } = checked;
  const key = emailKey(checked.email);
  const fields: ImportedUserFields = {
    ...storedProfile(input.profile),
    email: checked.email,
    emailKey: key,
    emailVerified: input.email.isEmailVerified || (user.emailVerified === true && user.emailKey === key),
    phone: checked.phone,
    // Stryker disable next-line OptionalChaining: a phone is set only from input.phone, so input.phone is there
    phoneVerified: checked.phone === null ? null : input.phone?.isPhoneVerified === true || (user.phoneVerified === true && user.phone === checked.phone),
  };
  const changed = (Object.keys(fields) as (keyof ImportedUserFields)[]).filter((name) => fields[name] !== user[name]);
  const adoptsExternalId = user.externalId === null && externalId !== "";
  const activate = user.state === "initial" && fields.emailVerified === true && (passwordHash ?? user.passwordHash) !== null;
  if (changed.length === 0 && passwordHash === undefined && !adoptsExternalId && !activate) return undefined;
  const write: RowWrite = {
    kind: "user.importUpdate",
    id: user.id,
    fields,
    activate,
    // (The store sets a hash only when the write has one, an undefined hash being none: the `true` mutant is equivalent.)
    ...(passwordHash !== undefined ? { passwordHash } : {}),
    ...(adoptsExternalId ? { externalId } : {}),
  };
  const voidEmailCode: RowWrite[] = user.emailKey !== key ? [{ kind: "code.void", userId: user.id, codeKind: "email" }] : [];
  // As SetPassword: the init code's link would set a password again over the one set now (by whoever holds the mail);
  // as SetEmail: a link mailed to the old address must not set the first password once the address changed.
  const voidInitCode: RowWrite[] = passwordHash !== undefined || user.emailKey !== key ? [{ kind: "code.void", userId: user.id, codeKind: "init" }] : [];
  const event: NewEvent = {
    aggregateType: "user",
    aggregateId: user.id,
    type: EventType.humanUserChanged,
    // What changed, by name and new value (emailKey is the email's lower case); of a password only what it is.
    payload: {
      via: "import",
      ...Object.fromEntries(changed.filter((name) => name !== "emailKey").map((name) => [name, fields[name]])),
      // Stryker disable next-line OptionalChaining: a new hash without a plain password is the imported one, so checked.imported is there
      ...(passwordHash !== undefined ? { password: input.password ? "set" : `imported:${checked.imported?.scheme}` } : {}),
      ...(adoptsExternalId ? { externalId } : {}),
      ...(activate ? { state: "active" } : {}),
    },
    resourceOwner: user.orgId,
  };
  return { writes: [write, ...voidEmailCode, ...voidInitCode], event };
}
