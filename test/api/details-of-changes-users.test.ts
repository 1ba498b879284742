import { describe, expect, it } from "vitest";
import { OrganizationService } from "../../gen/gatehouse/admin/v1/organization_pb.js";
import { UserService } from "../../gen/gatehouse/admin/v1/user_pb.js";
import { type Protocol, PROTOCOLS } from "../support/clients.js";
import { type Answer, createdAt, dateOf, expectDetails, expectDetailsOfChange, later } from "../support/details-of-changes.js";
import { useTestServer } from "../support/server.js";

/*
 * API.md on `details`: a write answers the sequence and time of the last event it appended and the
 * object's FIRST event's time as `creation_date`; the resource owner is the user's organization.
 * Every row creates a user, moves the server's clock on, changes the user and checks the answer against
 * the user's own events in ListEvents: the creation date stays the user's, the change date is the new
 * clock time. (A change that answered its own time as creation date would pass any check that only
 * compares the two dates with each other.)
 */
const t = useTestServer();
let n = 0;
const slug = (text: string) => `${text.toLowerCase().replace(/[^a-z0-9]+/g, "-")}-${++n}`;
const users = (orgId: string, protocol: Protocol = "connect-json-http1") => t.clients.client(UserService, protocol, { token: t.server.adminToken, orgId });

/** A user in an organization of its own, created at the current clock time. */
interface UserSubject {
  orgId: string;
  userId: string;
  createdAt: Date;
}

async function organization(name: string): Promise<string> {
  const { organizationId } = await t.clients.client(OrganizationService, "connect-json-http1", { token: t.server.adminToken }).createOrganization({ name });
  return organizationId;
}

/** A human user with an unverified email (so a code is pending) and a password. */
async function humanUser(name: string): Promise<UserSubject> {
  const orgId = await organization(name);
  const created = await users(orgId).createHumanUser({
    userName: name,
    profile: { firstName: "Dee", lastName: "Tails" },
    email: { email: `${name}@example.com` },
    password: "Sup3r-secret!",
  });
  return { orgId, userId: created.userId, createdAt: createdAt(created) };
}

async function machineUser(name: string): Promise<UserSubject> {
  const orgId = await organization(name);
  const created = await users(orgId).createMachineUser({ userName: name, name });
  return { orgId, userId: created.userId, createdAt: createdAt(created) };
}

interface Row {
  rpc: string;
  /** Creates the user (and whatever the change needs, later than the creation); returns it and the change. */
  arrange: (name: string) => Promise<UserSubject & { change: (protocol: Protocol) => Promise<Answer>; removes?: boolean }>;
}

const rows: Row[] = [
  {
    rpc: "SetEmail (code mailed)",
    arrange: async (name) => {
      const user = await humanUser(name);
      return { ...user, change: (protocol) => users(user.orgId, protocol).setEmail({ userId: user.userId, email: `${name}-new@example.com` }) };
    },
  },
  {
    rpc: "SetEmail (marked verified)",
    arrange: async (name) => {
      const user = await humanUser(name);
      return { ...user, change: (protocol) => users(user.orgId, protocol).setEmail({ userId: user.userId, email: `${name}-new@example.com`, isVerified: true }) };
    },
  },
  {
    rpc: "SetEmail (code returned)",
    arrange: async (name) => {
      const user = await humanUser(name);
      return { ...user, change: (protocol) => users(user.orgId, protocol).setEmail({ userId: user.userId, email: `${name}-new@example.com`, returnCode: true }) };
    },
  },
  {
    rpc: "ResendEmailCode (code mailed)",
    arrange: async (name) => {
      const user = await humanUser(name);
      return { ...user, change: (protocol) => users(user.orgId, protocol).resendEmailCode({ userId: user.userId }) };
    },
  },
  {
    rpc: "ResendEmailCode (code returned)",
    arrange: async (name) => {
      const user = await humanUser(name);
      return { ...user, change: (protocol) => users(user.orgId, protocol).resendEmailCode({ userId: user.userId, returnCode: true }) };
    },
  },
  {
    rpc: "DeactivateUser",
    arrange: async (name) => {
      const user = await machineUser(name);
      return { ...user, change: (protocol) => users(user.orgId, protocol).deactivateUser({ userId: user.userId }) };
    },
  },
  {
    rpc: "ReactivateUser",
    arrange: async (name) => {
      const user = await machineUser(name);
      later(t.server.clock);
      await users(user.orgId).deactivateUser({ userId: user.userId });
      return { ...user, change: (protocol) => users(user.orgId, protocol).reactivateUser({ userId: user.userId }) };
    },
  },
  {
    rpc: "LockUser",
    arrange: async (name) => {
      const user = await machineUser(name);
      return { ...user, change: (protocol) => users(user.orgId, protocol).lockUser({ userId: user.userId }) };
    },
  },
  {
    rpc: "UnlockUser",
    arrange: async (name) => {
      const user = await machineUser(name);
      later(t.server.clock);
      await users(user.orgId).lockUser({ userId: user.userId });
      return { ...user, change: (protocol) => users(user.orgId, protocol).unlockUser({ userId: user.userId }) };
    },
  },
  {
    rpc: "RemoveUser",
    arrange: async (name) => {
      const user = await machineUser(name);
      // A membership and a token go with the user, each removal appended before user.removed.
      later(t.server.clock);
      await t.clients
        .client(OrganizationService, "connect-json-http1", { token: t.server.adminToken, orgId: user.orgId })
        .addOrganizationMember({ userId: user.userId, roles: ["ORG_OWNER_VIEWER"] });
      await users(user.orgId).addPersonalAccessToken({ userId: user.userId });
      return { ...user, removes: true, change: (protocol) => users(user.orgId, protocol).removeUser({ userId: user.userId }) };
    },
  },
];

describe("details of a change to a user (API.md `details`)", () => {
  it.each(rows.map((row, i) => [row.rpc, PROTOCOLS[i % PROTOCOLS.length]!, row] as const))(
    "%s over %s: sequence and time of the user's last event, the user's creation date, the user's organization",
    async (rpc, protocol, { arrange }) => {
      const subject = await arrange(slug(rpc));
      const changedAt = later(t.server.clock);
      const answer = await subject.change(protocol);
      await expectDetailsOfChange(t.clients, t.server.adminToken, answer.details, {
        of: { aggregateType: "user", aggregateId: subject.userId },
        createdAt: subject.createdAt,
        changedAt,
        resourceOwner: subject.orgId,
      });
      // On read, the user's details are those of its last event: the ones the change answered.
      if (!subject.removes) expect((await users(subject.orgId).getUser({ userId: subject.userId })).user?.details).toEqual(answer.details);
    },
  );

  it.each(PROTOCOLS)(
    "VerifyEmail over %s: sequence and time of the user's last event, the user's organization, and no creation date",
    async (protocol) => {
      const user = await humanUser(slug("VerifyEmail"));
      later(t.server.clock);
      const { verificationCode } = await users(user.orgId).resendEmailCode({ userId: user.userId, returnCode: true });
      const changedAt = later(t.server.clock);
      const { details } = await users(user.orgId, protocol).verifyEmail({ userId: user.userId, verificationCode: verificationCode! });
      expect(details?.creationDate).toBeUndefined();
      await expectDetails(t.clients, t.server.adminToken, details, {
        of: { aggregateType: "user", aggregateId: user.userId },
        createdAt: undefined,
        changedAt,
        resourceOwner: user.orgId,
      });
      // The user still has its creation date on read.
      expect(dateOf((await users(user.orgId).getUser({ userId: user.userId })).user?.details?.creationDate)).toEqual(user.createdAt);
    },
  );
});
