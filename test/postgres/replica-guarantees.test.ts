import { Code } from "@connectrpc/connect";
import { afterEach, describe, expect, it } from "vitest";
import { EventService } from "../../gen/gatehouse/admin/v1/event_pb.js";
import { OrganizationService } from "../../gen/gatehouse/admin/v1/organization_pb.js";
import { SmtpService } from "../../gen/gatehouse/admin/v1/smtp_pb.js";
import { UserService } from "../../gen/gatehouse/admin/v1/user_pb.js";
import { PROTOCOLS } from "../support/clients.js";
import { failure } from "../support/errors.js";
import { type ReplicaProcess, threeReplicaProcesses } from "../support/replica-processes.js";
import { type Cleanups, sharedDatabase as sharedDatabaseFor } from "../support/shared-database.js";
import { createActor } from "../support/world.js";

// Issue 13, item 2: the guarantees of one SQLite process hold across three Gatehouse PROCESSES on one PostgreSQL
// database, with the clients' calls spread over the three (and over the protocols). The outbox's guarantees are proven
// by mail-replicas.test.ts, bootstrap-once by bootstrap-replicas.test.ts; the store contract suite (test/store) proves
// the same rules with two stores on one database, where a race can be forced rather than hoped for.

const cleanups: Cleanups = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function threeReplicas() {
  const shared = await sharedDatabaseFor(cleanups, "gatehouse-replica-guarantees-");
  return { shared, ...(await threeReplicaProcesses(cleanups, shared)) };
}

/** The `i`-th call's replica and protocol: calls go round the three replicas and the four protocols. */
function spread<S extends Parameters<ReplicaProcess["clients"]["client"]>[0]>(replicas: ReplicaProcess[], service: S, i: number, options: { token: string; orgId?: string }) {
  return replicas[i % replicas.length]!.clients.client(service, PROTOCOLS[i % PROTOCOLS.length]!, options);
}

/** Settles every call; how many succeeded, and the code and reason of each refusal. */
async function outcomesOf(calls: Promise<unknown>[]) {
  const settled = await Promise.allSettled(calls);
  const refusals = await Promise.all(
    settled.filter((outcome) => outcome.status === "rejected").map(async (outcome) => {
      const { code, reason } = await failure(Promise.reject((outcome as PromiseRejectedResult).reason));
      return { code, reason };
    }),
  );
  return { succeeded: settled.length - refusals.length, refusals };
}

describe("three replicas on one PostgreSQL database", () => {
  it("uniqueness rules hold when the same name, configuration or membership is asked for on all three at once: exactly one wins", { timeout: 180_000 }, async () => {
    const { replicas, adminToken } = await threeReplicas();
    const admin = { token: adminToken };
    const { organizationId } = await spread(replicas, OrganizationService, 0, admin).createOrganization({ name: "Unique names" });
    const inOrg = { token: adminToken, orgId: organizationId };
    const six = [0, 1, 2, 3, 4, 5];

    const userNames = await outcomesOf(
      six.map((i) => spread(replicas, UserService, i, inOrg).createMachineUser({ userName: "only-once", name: `attempt ${i}` })),
    );
    expect(userNames.succeeded).toBe(1);
    expect(userNames.refusals).toEqual(Array(5).fill({ code: Code.AlreadyExists, reason: "user.already_exists" }));

    const smtp = await outcomesOf(
      six.map((i) =>
        spread(replicas, SmtpService, i, admin).createSmtpConfig({ senderAddress: `noreply-${i}@gatehouse.test`, senderName: "Gatehouse", tls: false, host: "127.0.0.1:2525", user: "" }),
      ),
    );
    expect(smtp.succeeded).toBe(1);
    expect(smtp.refusals).toEqual(Array(5).fill({ code: Code.AlreadyExists, reason: "smtp.already_exists" }));

    const { userId } = await spread(replicas, UserService, 0, inOrg).createMachineUser({ userName: "member-once", name: "Member once" });
    const memberships = await outcomesOf(
      six.map((i) => spread(replicas, OrganizationService, i, inOrg).addOrganizationMember({ userId, roles: ["ORG_OWNER_VIEWER"] })),
    );
    expect(memberships.succeeded).toBe(1);
    expect(memberships.refusals).toEqual(Array(5).fill({ code: Code.AlreadyExists, reason: "member.already_exists" }));
    const { members } = await spread(replicas, OrganizationService, 1, inOrg).listOrganizationMembers({});
    expect(members.filter((member) => member.userId === userId)).toHaveLength(1);
  });

  it("20 wrong codes sent at once through three replicas: exactly five are judged, the other fifteen find the code exhausted", { timeout: 180_000 }, async () => {
    const { shared, replicas, adminToken } = await threeReplicas();
    const { organizationId } = await spread(replicas, OrganizationService, 0, { token: adminToken }).createOrganization({ name: "Code attempts" });
    const inOrg = { token: adminToken, orgId: organizationId };
    const { userId } = await spread(replicas, UserService, 0, inOrg).createHumanUser({
      userName: "guessed",
      profile: { firstName: "Guessed", lastName: "At" },
      email: { email: "guessed@example.com" },
      password: "Sup3r-secret!",
    });
    // Twenty distinct well-formed codes (six of [A-Z0-9]). Each is the mailed one with a chance of 36^-6; a right guess
    // would show as a success and fail the test, never make it pass wrongly.
    const guesses = Array.from({ length: 20 }, (_, i) => String(i).padStart(6, "0"));
    const outcomes = await outcomesOf(guesses.map((code, i) => spread(replicas, UserService, i, inOrg).verifyEmail({ userId, verificationCode: code })));
    expect(outcomes.succeeded).toBe(0);
    const judged = outcomes.refusals.filter((refusal) => refusal.reason === "email_code.invalid");
    const exhausted = outcomes.refusals.filter((refusal) => refusal.reason === "email_code.exhausted");
    expect(judged).toEqual(Array(5).fill({ code: Code.InvalidArgument, reason: "email_code.invalid" }));
    expect(exhausted).toEqual(Array(15).fill({ code: Code.FailedPrecondition, reason: "email_code.exhausted" }));
    // The database agrees: five attempts claimed on the code, five failed-verification events, no verified email.
    const { rows: codes } = await shared.sql.query<{ attempts: number }>("SELECT attempts FROM one_time_codes WHERE user_id = $1 AND kind = 'email'", [userId]);
    expect(codes).toEqual([{ attempts: 5 }]);
    const { events } = await spread(replicas, EventService, 2, { token: adminToken }).listEvents({ aggregateId: userId });
    expect(events.filter((event) => event.eventType === "user.email.verification.failed")).toHaveLength(5);
    const { user } = await spread(replicas, UserService, 1, inOrg).getUser({ userId });
    expect(user?.type).toMatchObject({ case: "human", value: { email: { isEmailVerified: false } } });
  });

  it("readers paging ListEvents with from_sequence on every replica, while all three write, never skip an event and see sequences strictly increase", { timeout: 180_000 }, async () => {
    const { replicas, adminToken } = await threeReplicas();
    const admin = { token: adminToken };
    const start = (await spread(replicas, EventService, 0, admin).listEvents({ pageSize: 1000 })).events.at(-1)!.sequence + 1n;

    let writing = true;
    const writers = Promise.all(
      Array.from({ length: 6 }, async (_, w) => {
        for (let k = 0; k < 15; k++) await spread(replicas, OrganizationService, w + k, admin).createOrganization({ name: `Written ${w}-${k}` });
      }),
    ).finally(() => (writing = false));

    /** Pages from `start` on, as a follower of the log does: from the last sequence seen plus one, until writing ended. */
    const follow = async (replica: number) => {
      const seen: bigint[] = [];
      let from = start;
      for (let i = 0; ; i++) {
        const done = !writing;
        const { events } = await spread(replicas, EventService, replica + 3 * i, admin).listEvents({ fromSequence: from, pageSize: 1000 });
        seen.push(...events.map((event) => event.sequence));
        if (events.length > 0) from = events.at(-1)!.sequence + 1n;
        // One more read after the writers finished: whatever committed before it is in it.
        if (done && events.length === 0) return seen;
      }
    };
    const followed = await Promise.all(replicas.map((_, r) => follow(r)));
    await writers;

    const all = (await spread(replicas, EventService, 1, admin).listEvents({ fromSequence: start, pageSize: 1000 })).events.map((event) => event.sequence);
    // 90 organizations, each an org.added event at least.
    expect(all.length).toBeGreaterThanOrEqual(90);
    for (const seen of followed) {
      expect(seen).toEqual(all);
      for (let i = 1; i < seen.length; i++) expect(seen[i]! > seen[i - 1]!).toBe(true);
    }
  });

  it("a membership, a token or a user changed on one replica is obeyed by the very next call on the two others", { timeout: 180_000 }, async () => {
    const { replicas, adminToken } = await threeReplicas();
    const [first, second, third] = replicas as [ReplicaProcess, ReplicaProcess, ReplicaProcess];
    const { organizationId } = await first.clients.client(OrganizationService, "connect-json-http1", { token: adminToken }).createOrganization({ name: "Obeyed" });
    const inOrg = { token: adminToken, orgId: organizationId };
    const others = [second, third];
    const getOrganization = (replica: ReplicaProcess, token: string) =>
      replica.clients.client(OrganizationService, "grpc-h2c", { token, orgId: organizationId }).getOrganization({ organizationId });

    // Membership: an owner-viewer reads on both others (their principal caches warm), loses the membership on the first.
    const member = await createActor(first.clients, adminToken, organizationId, "obeyed-member", ["ORG_OWNER_VIEWER"]);
    for (const replica of others) await getOrganization(replica, member.token);
    await first.clients.client(OrganizationService, "connect-json-http1", inOrg).removeOrganizationMember({ userId: member.userId });
    for (const replica of others) expect(await failure(getOrganization(replica, member.token))).toMatchObject({ code: Code.PermissionDenied });

    // Token: removed on the first, refused by the others at once.
    const holder = await createActor(first.clients, adminToken, organizationId, "obeyed-token", ["ORG_OWNER_VIEWER"]);
    for (const replica of others) await getOrganization(replica, holder.token);
    const users = first.clients.client(UserService, "connect-json-http1", inOrg);
    const { tokens } = await users.listPersonalAccessTokens({ userId: holder.userId });
    await users.removePersonalAccessToken({ userId: holder.userId, tokenId: tokens[0]!.tokenId });
    for (const replica of others) expect(await failure(getOrganization(replica, holder.token))).toMatchObject({ code: Code.Unauthenticated });

    // User: deactivated on the first, refused by the others at once.
    const user = await createActor(first.clients, adminToken, organizationId, "obeyed-user", ["ORG_OWNER_VIEWER"]);
    for (const replica of others) await getOrganization(replica, user.token);
    await users.deactivateUser({ userId: user.userId });
    for (const replica of others) expect(await failure(getOrganization(replica, user.token))).toMatchObject({ code: Code.Unauthenticated });
  });
});
