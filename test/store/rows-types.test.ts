import { getTableColumns, type Table } from "drizzle-orm";
import { describe, expect, expectTypeOf, it } from "vitest";
import type * as rows from "../../src/store/rows.js";
import * as postgres from "../../src/store/postgres/schema/index.js";
import * as sqlite from "../../src/store/sqlite/schema/index.js";

// Row types are defined once (src/store/rows.ts) and every engine's schema must infer exactly them: a column that one
// engine types differently (a number as a bigint string, a JSON column as unknown, a nullable one as required) would
// reach commands and queries only on that engine. The type assertions are checked by `tsc --noEmit`; the runtime
// assertions check the same tables column by column.

/** The property names of a table's rows, as the schema declares its columns. */
const columnsOf = (table: Table) => Object.keys(getTableColumns(table)).sort();
/** A PostgreSQL table's rows without `position`, its insertion order (never part of a row the store returns). */
type PgRow<T extends { $inferSelect: object }> = Omit<T["$inferSelect"], "position">;
/** The keys a row type must have, listed once and checked against the type. */
const keys = <Row>(...names: (keyof Row & string)[]) => names.sort();

describe("the SQLite schema infers the rows of rows.ts", () => {
  it("every table's select type is its row type", () => {
    expectTypeOf<typeof sqlite.instances.$inferSelect>().toEqualTypeOf<rows.InstanceRow>();
    expectTypeOf<typeof sqlite.organizations.$inferSelect>().toEqualTypeOf<rows.OrganizationRow>();
    expectTypeOf<typeof sqlite.users.$inferSelect>().toEqualTypeOf<rows.UserRow>();
    expectTypeOf<typeof sqlite.users.$inferInsert>().toEqualTypeOf<rows.NewUserRow>();
    expectTypeOf<typeof sqlite.personalAccessTokens.$inferSelect>().toEqualTypeOf<rows.TokenRow>();
    expectTypeOf<typeof sqlite.memberships.$inferSelect>().toEqualTypeOf<rows.MembershipRow>();
    expectTypeOf<typeof sqlite.projects.$inferSelect>().toEqualTypeOf<rows.ProjectRow>();
    expectTypeOf<typeof sqlite.projectRoles.$inferSelect>().toEqualTypeOf<rows.ProjectRoleRow>();
    expectTypeOf<typeof sqlite.projectGrants.$inferSelect>().toEqualTypeOf<rows.ProjectGrantRow>();
    expectTypeOf<typeof sqlite.applications.$inferSelect>().toEqualTypeOf<rows.ApplicationRow>();
    expectTypeOf<typeof sqlite.identityProviders.$inferSelect>().toEqualTypeOf<rows.IdentityProviderRow>();
    expectTypeOf<typeof sqlite.userIdpLinks.$inferSelect>().toEqualTypeOf<rows.UserIdpLinkRow>();
    expectTypeOf<typeof sqlite.oneTimeCodes.$inferSelect>().toEqualTypeOf<rows.OneTimeCodeRow>();
    expectTypeOf<typeof sqlite.outbox.$inferSelect>().toEqualTypeOf<Required<rows.OutboxRow>>();
    expectTypeOf<typeof sqlite.passwordPolicies.$inferSelect>().toEqualTypeOf<rows.PasswordPolicyRow>();
    expectTypeOf<typeof sqlite.lockoutPolicies.$inferSelect>().toEqualTypeOf<rows.LockoutPolicyRow>();
    expectTypeOf<typeof sqlite.smtpConfigs.$inferSelect>().toEqualTypeOf<rows.SmtpConfigRow>();
    expectTypeOf<typeof sqlite.events.$inferSelect>().toEqualTypeOf<rows.EventRow>();
    expect(columnsOf(sqlite.users)).toEqual(
      keys<rows.UserRow>(
        "id", "instanceId", "orgId", "type", "state", "inactive", "locked", "userName", "userNameKey", "machineName", "machineDescription",
        "firstName", "lastName", "nickName", "displayName", "preferredLanguage", "gender", "email", "emailKey", "emailVerified", "phone",
        "phoneVerified", "passwordHash", "passwordChangeRequired", "failedPasswordAttempts", "otpSecretSealed", "externalId",
      ),
    );
  });
});

describe("the PostgreSQL schema infers the same rows (position, its insertion order, left out)", () => {
  it("every table's select type, without position, is its row type", () => {
    expectTypeOf<PgRow<typeof postgres.instances>>().toEqualTypeOf<rows.InstanceRow>();
    expectTypeOf<PgRow<typeof postgres.organizations>>().toEqualTypeOf<rows.OrganizationRow>();
    expectTypeOf<PgRow<typeof postgres.users>>().toEqualTypeOf<rows.UserRow>();
    expectTypeOf<typeof postgres.users.$inferInsert>().toEqualTypeOf<rows.NewUserRow>();
    expectTypeOf<PgRow<typeof postgres.personalAccessTokens>>().toEqualTypeOf<rows.TokenRow>();
    expectTypeOf<PgRow<typeof postgres.memberships>>().toEqualTypeOf<rows.MembershipRow>();
    expectTypeOf<PgRow<typeof postgres.projects>>().toEqualTypeOf<rows.ProjectRow>();
    expectTypeOf<PgRow<typeof postgres.projectRoles>>().toEqualTypeOf<rows.ProjectRoleRow>();
    expectTypeOf<PgRow<typeof postgres.projectGrants>>().toEqualTypeOf<rows.ProjectGrantRow>();
    expectTypeOf<PgRow<typeof postgres.applications>>().toEqualTypeOf<rows.ApplicationRow>();
    expectTypeOf<PgRow<typeof postgres.identityProviders>>().toEqualTypeOf<rows.IdentityProviderRow>();
    expectTypeOf<PgRow<typeof postgres.userIdpLinks>>().toEqualTypeOf<rows.UserIdpLinkRow>();
    expectTypeOf<PgRow<typeof postgres.oneTimeCodes>>().toEqualTypeOf<rows.OneTimeCodeRow>();
    expectTypeOf<PgRow<typeof postgres.outbox>>().toEqualTypeOf<Required<rows.OutboxRow>>();
    expectTypeOf<PgRow<typeof postgres.passwordPolicies>>().toEqualTypeOf<rows.PasswordPolicyRow>();
    expectTypeOf<PgRow<typeof postgres.lockoutPolicies>>().toEqualTypeOf<rows.LockoutPolicyRow>();
    expectTypeOf<PgRow<typeof postgres.smtpConfigs>>().toEqualTypeOf<rows.SmtpConfigRow>();
    expectTypeOf<PgRow<typeof postgres.events>>().toEqualTypeOf<rows.EventRow>();
    // Both engines declare the same columns under the same names (the PostgreSQL tables add only position).
    const tables = ["instances", "organizations", "users", "personalAccessTokens", "memberships", "projects", "projectRoles", "projectGrants",
      "applications", "identityProviders", "userIdpLinks", "oneTimeCodes", "outbox", "passwordPolicies", "lockoutPolicies", "smtpConfigs", "events", "masterKeyProbe"] as const;
    for (const name of tables) {
      expect({ name, columns: columnsOf(postgres[name]).filter((column) => column !== "position") }).toEqual({ name, columns: columnsOf(sqlite[name]) });
    }
  });
});
