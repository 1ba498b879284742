import { selectManagedUser } from "../access/select-user.js";
import type { Caller, Deps } from "../context.js";
import { DomainError, failedPrecondition, notFound } from "../domain/errors.js";
import { checkPasswordPolicy, DEFAULT_PASSWORD_POLICY } from "../domain/password-policy.js";
import { type Details, detailsOfChange } from "../events/details.js";
import { EventType } from "../events/types.js";
import { spanOf } from "../queries/details.js";
import type { RowWrite } from "../store/commit.js";
import { hashPassword } from "../support/password-hash.js";
import { commitAs, type Expected, expectationOf } from "./commit-as.js";

export interface SetPasswordInput extends Expected {
  userId: string;
  password: string;
  changeRequired: boolean;
}

/**
 * UserService.SetPassword: an administrator sets a human user's password. A password is a credential, so `user.write`
 * AND the privilege ceiling (selectManagedUser); the policy is checked and argon2id computed (off the event loop)
 * before the one commit. The memberships the ceiling was checked against must still be the user's at commit time
 * (`checkedMemberships`), so a role granted meanwhile cannot slip under a password set by someone below it.
 */
export async function setPassword(deps: Deps, caller: Caller, input: SetPasswordInput): Promise<{ details: Details }> {
  const { organization, user, checkedMemberships } = await selectManagedUser(deps, caller, input.userId);
  if (user.type !== "human") throw failedPrecondition("user.not_human", "machine users have no password; they use personal access tokens");
  // Stryker disable next-line LogicalOperator: the stored policy is the one bootstrap wrote, DEFAULT_PASSWORD_POLICY (no RPC changes it yet)
  checkPasswordPolicy((await deps.store.getPasswordPolicy(user.instanceId)) ?? DEFAULT_PASSWORD_POLICY, input.password);
  const passwordHash = await hashPassword(input.password);
  // The init code's link would set a password again: the password it was sent for is set now.
  const initCode = await deps.store.findCode(user.id, "init");
  const voidInit = initCode !== undefined && initCode.usedAt === null;
  // INITIAL only for want of a password once the email is verified: with one, the user is ACTIVE as if created so.
  const activate = user.emailVerified === true;
  const writes: RowWrite[] = [
    { kind: "user.setPassword", id: user.id, passwordHash, changeRequired: input.changeRequired, activate, checkedMemberships },
    ...(voidInit ? [{ kind: "code.void" as const, userId: user.id, codeKind: "init" as const }] : []),
  ];
  const span = await spanOf(deps.store, "user", user.id);
  const committed = await commitAs(deps, caller, {
    writes,
    events: [
      {
        aggregateType: "user",
        aggregateId: user.id,
        type: EventType.userPasswordSet,
        // Never the password or its hash.
        payload: { passwordChangeRequired: input.changeRequired, initCodeVoided: voidInit },
        resourceOwner: organization.id,
      },
    ],
    expect: expectationOf("user", user.id, input),
  }).catch(async (error: unknown) => {
    // Removed meanwhile: answer as a later call would. (Roles changed meanwhile stays aborted: read and retry.)
    if (error instanceof DomainError && error.reason === "store.condition_failed" && !(await deps.store.findUserById(user.id))) {
      throw notFound("user.not_found", "the user does not exist", { userId: user.id });
    }
    throw error;
  });
  return { details: detailsOfChange(committed, span.first) };
}
