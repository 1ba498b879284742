/** Every event type Gatehouse appends, so they are named in one place. */
export const EventType = {
  instanceAdded: "instance.added",
  instanceMemberAdded: "instance.member.added",
  orgAdded: "org.added",
  orgMemberAdded: "org.member.added",
  machineUserAdded: "user.machine.added",
  personalAccessTokenAdded: "user.pat.added",
} as const;
