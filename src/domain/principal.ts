import type { MembershipLevel } from "./roles.js";

/** A membership as authorization sees it. */
export interface Membership {
  level: MembershipLevel;
  /** Id of the instance, organization, project or project grant the membership is for. */
  scopeId: string;
  /** The organization that owns the scope (for instance memberships: the instance id). */
  ownerOrgId: string;
  /** For project grants: the granted project, so a grant role can be checked against a project too. */
  projectId?: string;
  roles: string[];
}

/** The authenticated caller. */
export interface Principal {
  userId: string;
  /** The caller's own organization: used when a request names none. */
  orgId: string;
  instanceId: string;
  tokenId: string;
  memberships: Membership[];
}
