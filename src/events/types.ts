/** Every event type Gatehouse appends, so they are named in one place. */
export const EventType = {
  instanceAdded: "instance.added",
  instanceMemberAdded: "instance.member.added",
  orgAdded: "org.added",
  orgMemberAdded: "org.member.added",
  machineUserAdded: "user.machine.added",
  personalAccessTokenAdded: "user.pat.added",
  projectAdded: "project.added",
  projectRoleAdded: "project.role.added",
  projectMemberAdded: "project.member.added",
  projectGrantAdded: "project.grant.added",
  projectGrantMemberAdded: "project.grant.member.added",
  projectGrantMemberRemoved: "project.grant.member.removed",
  applicationAdded: "application.added",
  applicationChanged: "application.changed",
  idpAdded: "idp.added",
  idpChanged: "idp.changed",
} as const;
