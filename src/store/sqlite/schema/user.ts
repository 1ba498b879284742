import { sql } from "drizzle-orm";
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { organizations } from "./organization.js";

/** Users of both types; type-specific columns are null for the other type. */
export const users = sqliteTable(
  "users",
  {
    id: text("id").primaryKey(),
    instanceId: text("instance_id").notNull(),
    orgId: text("org_id")
      .notNull()
      .references(() => organizations.id),
    type: text("type", { enum: ["human", "machine"] }).notNull(),
    /** Initialization progress only; deactivation and locks are the flags below, so they never overwrite it. */
    state: text("state", { enum: ["active", "initial"] }).notNull(),
    /** Deactivated (DeactivateUser): its tokens are refused until it is reactivated. */
    inactive: integer("inactive", { mode: "boolean" }).notNull().default(false),
    /** Locked (LockUser): its tokens are refused until it is unlocked; independent of `inactive`. */
    locked: integer("locked", { mode: "boolean" }).notNull().default(false),
    userName: text("user_name").notNull(),
    /** Lower-cased user name: unique per instance, case-insensitively, by this index. */
    userNameKey: text("user_name_key").notNull(),
    machineName: text("machine_name"),
    machineDescription: text("machine_description"),
    // Human users only; null for machines.
    firstName: text("first_name"),
    lastName: text("last_name"),
    nickName: text("nick_name"),
    displayName: text("display_name"),
    preferredLanguage: text("preferred_language"),
    gender: integer("gender"),
    email: text("email"),
    /** Lower-cased email, for case-insensitive filters. */
    emailKey: text("email_key"),
    emailVerified: integer("email_verified", { mode: "boolean" }),
    /** E.164. */
    phone: text("phone"),
    phoneVerified: integer("phone_verified", { mode: "boolean" }),
    /** argon2id of a set password, or an imported hash stored as given; never returned or logged. */
    passwordHash: text("password_hash"),
    passwordChangeRequired: integer("password_change_required", { mode: "boolean" }),
    /** Wrong passwords in a row (VerifyPassword) since the last right one or unlock; the lockout policy locks at its limit. */
    failedPasswordAttempts: integer("failed_password_attempts").notNull().default(0),
    /** Imported TOTP secret, sealed under the master key. */
    otpSecretSealed: text("otp_secret_sealed"),
    /**
     * The user's id in the system it was imported from (ImportHumanUsers' `external_id`), chosen by the importer:
     * unique per organization, so a re-run of the same import finds the user again. Null when none was given.
     */
    externalId: text("external_id"),
  },
  (table) => [
    uniqueIndex("users_user_name_key").on(table.instanceId, table.userNameKey),
    // Only the users that have an external id: most have none, and every index entry is written with each new user
    // (a lookup by external id names one, which implies the condition, so it still finds them here).
    uniqueIndex("users_external_id").on(table.orgId, table.externalId).where(sql`${table.externalId} IS NOT NULL`),
    // An organization's users in creation order (ListUsers pages by rowid, which SQLite appends to every index): the
    // page is read along this index, never sorted.
    index("users_org").on(table.orgId),
    index("users_email").on(table.instanceId, table.emailKey),
  ],
);

/** Links of users to accounts at external identity providers; an external account belongs to one user. */
export const userIdpLinks = sqliteTable(
  "user_idp_links",
  {
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    idpId: text("idp_id").notNull(),
    externalUserId: text("external_user_id").notNull(),
    displayName: text("display_name").notNull(),
  },
  (table) => [uniqueIndex("user_idp_links_external").on(table.idpId, table.externalUserId), index("user_idp_links_user").on(table.userId)],
);
