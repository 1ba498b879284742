import type {
  applications,
  identityProviders,
  instances,
  memberships,
  organizations,
  personalAccessTokens,
  projectGrants,
  projectRoles,
  projects,
  users,
} from "./schema/index.js";

export type InstanceRow = typeof instances.$inferSelect;
export type OrganizationRow = typeof organizations.$inferSelect;
export type UserRow = typeof users.$inferSelect;
export type TokenRow = typeof personalAccessTokens.$inferSelect;
export type MembershipRow = typeof memberships.$inferSelect;
export type ProjectRow = typeof projects.$inferSelect;
export type ProjectRoleRow = typeof projectRoles.$inferSelect;
export type ProjectGrantRow = typeof projectGrants.$inferSelect;
export type ApplicationRow = typeof applications.$inferSelect;
export type IdentityProviderRow = typeof identityProviders.$inferSelect;
