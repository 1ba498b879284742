import type {
  applications,
  identityProviders,
  instances,
  memberships,
  organizations,
  personalAccessTokens,
  projectGrants,
  projectRoles,
  oneTimeCodes,
  outbox,
  passwordPolicies,
  projects,
  smtpConfigs,
  userIdpLinks,
  users,
} from "./schema/index.js";

export type InstanceRow = typeof instances.$inferSelect;
export type OrganizationRow = typeof organizations.$inferSelect;
export type UserRow = typeof users.$inferSelect;
/** A new user: type-specific columns may be left out (null). */
export type NewUserRow = typeof users.$inferInsert;
export type TokenRow = typeof personalAccessTokens.$inferSelect;
export type MembershipRow = typeof memberships.$inferSelect;
export type ProjectRow = typeof projects.$inferSelect;
export type ProjectRoleRow = typeof projectRoles.$inferSelect;
export type ProjectGrantRow = typeof projectGrants.$inferSelect;
export type ApplicationRow = typeof applications.$inferSelect;
export type IdentityProviderRow = typeof identityProviders.$inferSelect;
export type UserIdpLinkRow = typeof userIdpLinks.$inferSelect;
export type OneTimeCodeRow = typeof oneTimeCodes.$inferSelect;
/** `userId` may be left out by writers that do not know it; the commit links the mail to its user (sqlite-store.ts). */
export type OutboxRow = Omit<typeof outbox.$inferSelect, "userId"> & { userId?: string | null };
export type PasswordPolicyRow = typeof passwordPolicies.$inferSelect;
export type SmtpConfigRow = typeof smtpConfigs.$inferSelect;
