/**
 * Events: what happened, appended to the instance-wide log in the same transaction as the state
 * change. Payloads never carry secrets; commands build them from non-secret fields only.
 */
export const AGGREGATE_TYPES = ["instance", "org", "user", "member", "project", "project.grant", "application", "idp", "smtp", "notification", "sign_in"] as const;

/** The kinds of object the log holds events of (an event's `aggregateType` is always one of AGGREGATE_TYPES). */
export type AggregateType = (typeof AGGREGATE_TYPES)[number];

/** An event a command wants to append. */
export interface NewEvent {
  aggregateType: AggregateType;
  aggregateId: string;
  /** `aggregate.entity.pastTense`, e.g. `user.email.verified`. */
  type: string;
  payload: Record<string, unknown>;
  /** Organization the aggregate belongs to (instance id for instance-level aggregates). */
  resourceOwner: string;
}

/** An event as it stands in the log. */
export interface StoredEvent extends NewEvent {
  sequence: number;
  aggregateVersion: number;
  instanceId: string;
  actor: string;
  createdAt: Date;
}

/** Actor recorded for events no user caused (bootstrap, background delivery). */
export const SYSTEM_ACTOR = "system";
