/**
 * The rows of Gatehouse's state, defined once for every engine: commands and queries see these, and each engine's
 * schema (sqlite/schema, postgres/schema) must infer exactly these types (test/store/rows-types.test.ts proves it).
 * Times are milliseconds since the epoch; JSON columns hold the values typed here.
 */

/** OIDC settings; what UpdateApplication must never touch. */
export interface OidcSettings {
  type: "oidc";
  redirectUris: string[];
  responseTypes: number[];
  grantTypes: number[];
  appType: number;
  authMethod: number;
}

export interface ApiSettings {
  type: "api";
  authMethod: number;
}

export interface SamlSettings {
  type: "saml";
  entityId: string;
  metadataXml: string;
  metadataUrl: string;
}

export type ApplicationSettings = OidcSettings | ApiSettings | SamlSettings;

export type ActiveState = "active" | "inactive";

export interface InstanceRow {
  id: string;
  name: string;
  defaultOrgId: string;
}

export interface OrganizationRow {
  id: string;
  instanceId: string;
  name: string;
  /** Lower-cased name: unique per instance. */
  nameKey: string;
  state: ActiveState;
}

export interface UserRow {
  id: string;
  instanceId: string;
  orgId: string;
  type: "human" | "machine";
  state: "active" | "initial";
  inactive: boolean;
  locked: boolean;
  userName: string;
  userNameKey: string;
  machineName: string | null;
  machineDescription: string | null;
  firstName: string | null;
  lastName: string | null;
  nickName: string | null;
  displayName: string | null;
  preferredLanguage: string | null;
  gender: number | null;
  email: string | null;
  emailKey: string | null;
  emailVerified: boolean | null;
  phone: string | null;
  phoneVerified: boolean | null;
  passwordHash: string | null;
  passwordChangeRequired: boolean | null;
  /** Wrong passwords in a row since the last right one (or unlock); the lockout policy locks the user at its limit. */
  failedPasswordAttempts: number;
  otpSecretSealed: string | null;
  /** The id an import gave the user in its source system (unique per organization), or null. */
  externalId: string | null;
}

/** Columns of a new user that may be left out: the flags (default false) and the type-specific ones (null). */
type UserDefaults =
  | "inactive"
  | "locked"
  | "machineName"
  | "machineDescription"
  | "firstName"
  | "lastName"
  | "nickName"
  | "displayName"
  | "preferredLanguage"
  | "gender"
  | "email"
  | "emailKey"
  | "emailVerified"
  | "phone"
  | "phoneVerified"
  | "passwordHash"
  | "passwordChangeRequired"
  | "failedPasswordAttempts"
  | "otpSecretSealed"
  | "externalId";

/** A new user: type-specific columns may be left out (null). */
export type NewUserRow = Flat<Omit<UserRow, UserDefaults> & { [K in UserDefaults]?: UserRow[K] | undefined }>;

/** One object type instead of an intersection (as a schema infers it). */
type Flat<T> = { [K in keyof T]: T[K] };

export interface TokenRow {
  id: string;
  userId: string;
  secretHash: string;
  expiresAt: number | null;
  createdAt: number;
  issuerUserId: string | null;
}

export interface MembershipRow {
  id: string;
  userId: string;
  level: "instance" | "org" | "project" | "project_grant";
  scopeId: string;
  ownerOrgId: string;
  projectId: string | null;
  roles: string[];
}

export interface ProjectRow {
  id: string;
  instanceId: string;
  orgId: string;
  name: string;
  nameKey: string;
  state: ActiveState;
}

export interface ProjectRoleRow {
  projectId: string;
  roleKey: string;
  displayName: string;
}

export interface ProjectGrantRow {
  id: string;
  projectId: string;
  grantedOrgId: string;
  roleKeys: string[];
}

export interface ApplicationRow {
  id: string;
  projectId: string;
  name: string;
  nameKey: string;
  state: ActiveState;
  type: "oidc" | "api" | "saml";
  clientId: string | null;
  clientSecretHash: string | null;
  settings: ApplicationSettings;
}

export interface IdentityProviderRow {
  id: string;
  instanceId: string;
  orgId: string | null;
  ownerId: string;
  name: string;
  nameKey: string;
  issuer: string;
  clientId: string;
  clientSecretSealed: string;
  scopes: string[];
  stylingType: number;
  autoRegister: boolean;
}

export interface UserIdpLinkRow {
  userId: string;
  idpId: string;
  externalUserId: string;
  displayName: string;
}

export interface OneTimeCodeRow {
  id: string;
  userId: string;
  kind: "init" | "email" | "passwordless";
  digest: string;
  expiresAt: number;
  attempts: number;
  usedAt: number | null;
  /** Lower-cased address the code was mailed to (set for init codes: proof of that address); null when not mailed. */
  emailKey: string | null;
}

/** A new code: `emailKey` may be left out (null: not known to be mailed anywhere). */
export type NewOneTimeCodeRow = Flat<Omit<OneTimeCodeRow, "emailKey"> & { emailKey?: string | null | undefined }>;

/** `userId` may be left out by writers that do not know it; the commit links the mail to its user (null). */
export interface OutboxRow {
  id: string;
  instanceId: string;
  template: string;
  recipient: string;
  userId?: string | null;
  messageSealed: string;
  status: "pending" | "sent" | "failed";
  attempts: number;
  nextAttemptAt: number;
  createdAt: number;
  copiedAt: number | null;
  /**
   * The delivery worker (replica) that claimed the message (`Store.claimDueOutbox`), and until when: another worker may
   * claim it once that time has passed. Null while never claimed, and again after a retry. Writers of new rows leave
   * them out (a new message is unclaimed).
   */
  claimedBy?: string | null;
  claimedUntil?: number | null;
}

/** An instance's lockout policy (absent: the default of src/domain/lockout-policy.ts). */
export interface LockoutPolicyRow {
  instanceId: string;
  maxPasswordAttempts: number;
}

export interface PasswordPolicyRow {
  instanceId: string;
  minLength: number;
  requireUppercase: boolean;
  requireLowercase: boolean;
  requireDigit: boolean;
  requireSymbol: boolean;
}

export interface SmtpConfigRow {
  instanceId: string;
  senderAddress: string;
  senderName: string;
  tls: boolean;
  host: string;
  user: string;
  passwordSealed: string | null;
}

/** An event as an engine stores it: the payload as JSON text, the time in milliseconds. */
export interface EventRow {
  sequence: number;
  instanceId: string;
  aggregateType: string;
  aggregateId: string;
  aggregateVersion: number;
  type: string;
  payload: string;
  actor: string;
  resourceOwner: string;
  createdAt: number;
}
