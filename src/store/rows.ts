import type { instances, memberships, organizations, personalAccessTokens, users } from "./schema/index.js";

export type InstanceRow = typeof instances.$inferSelect;
export type OrganizationRow = typeof organizations.$inferSelect;
export type UserRow = typeof users.$inferSelect;
export type TokenRow = typeof personalAccessTokens.$inferSelect;
export type MembershipRow = typeof memberships.$inferSelect;
