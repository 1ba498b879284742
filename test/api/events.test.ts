import { Code } from "@connectrpc/connect";
import { timestampMs } from "@bufbuild/protobuf/wkt";
import { describe, expect, it } from "vitest";
import { EventService } from "../../gen/gatehouse/admin/v1/event_pb.js";
import { InstanceService } from "../../gen/gatehouse/admin/v1/instance_pb.js";
import { OrganizationService } from "../../gen/gatehouse/admin/v1/organization_pb.js";
import { UserService } from "../../gen/gatehouse/admin/v1/user_pb.js";
import { failure } from "../support/errors.js";
import { useTestServer } from "../support/server.js";

const t = useTestServer();

describe("the event log", () => {
  it("gets events from every write, with strictly increasing sequences, and details match the last event", async () => {
    const admin = { token: t.server.adminToken };
    const orgs = t.clients.client(OrganizationService, "grpc-h2c", admin);
    const users = t.clients.client(UserService, "grpc-h2c", admin);
    const events = t.clients.client(EventService, "grpc-h2c", admin);

    const writes: { details?: { sequence: bigint; changeDate?: { seconds: bigint; nanos: number }; resourceOwner: string } }[] = [];
    t.server.clock.advance(1000);
    const org = await orgs.createOrganization({ name: "Events Inc" });
    writes.push(org);
    t.server.clock.advance(1000);
    const user = await users.createMachineUser({ userName: "event-bot", name: "Bot" });
    writes.push(user);
    t.server.clock.advance(1000);
    const token = await users.addPersonalAccessToken({ userId: user.userId });
    writes.push(token);
    writes.push(await orgs.addOrganizationMember({ userId: user.userId, roles: ["ORG_OWNER_VIEWER"] }));
    writes.push(await t.clients.client(InstanceService, "grpc-h2c", admin).addInstanceMember({ userId: user.userId, roles: ["IAM_OWNER_VIEWER"] }));

    const sequences = writes.map((w) => w.details?.sequence ?? 0n);
    for (let i = 1; i < sequences.length; i++) expect(sequences[i]).toBeGreaterThan(sequences[i - 1] ?? 0n);

    const { events: log } = await events.listEvents({ fromSequence: sequences[0] });
    expect(log.map((e) => e.sequence)).toEqual(sequences);
    expect(log.map((e) => e.eventType)).toEqual(["org.added", "user.machine.added", "user.pat.added", "org.member.added", "instance.member.added"]);
    log.forEach((event, i) => {
      const details = writes[i]?.details;
      expect(event.resourceOwner).toBe(details?.resourceOwner);
      expect(timestampMs(event.creationDate!)).toBe(timestampMs(details!.changeDate as never));
    });
    // A later event of an existing object keeps the object's creation date.
    expect(timestampMs(token.details!.creationDate!)).toBe(timestampMs(user.details!.creationDate!));
    expect(timestampMs(token.details!.changeDate!)).toBeGreaterThan(timestampMs(token.details!.creationDate!));
    expect(log[2]?.aggregateVersion).toBe(2n);
  });

  it("never puts a token in an event", async () => {
    const admin = { token: t.server.adminToken };
    const users = t.clients.client(UserService, "connect-json-http1", admin);
    const { userId } = await users.createMachineUser({ userName: "secret-bot", name: "Bot" });
    const { token } = await users.addPersonalAccessToken({ userId });
    const { events } = await t.clients.client(EventService, "connect-json-http1", admin).listEvents({ aggregateId: userId });
    const text = JSON.stringify(events.map((e) => e.payload));
    expect(text).not.toContain(token.split(".")[2]);
    expect(t.server.logs.text).not.toContain(token.split(".")[2]);
  });

  it("pages with opaque tokens and rejects forged ones", async () => {
    const admin = { token: t.server.adminToken };
    const events = t.clients.client(EventService, "connect-json-http1", admin);
    // Its own aggregate with three events (created, two tokens), not whatever earlier tests wrote.
    const users = t.clients.client(UserService, "connect-json-http1", admin);
    const { userId } = await users.createMachineUser({ userName: "paged-events", name: "Paged" });
    for (let i = 0; i < 2; i++) await users.addPersonalAccessToken({ userId });
    const all = (await events.listEvents({ aggregateId: userId })).events.map((e) => e.sequence);
    expect(all).toHaveLength(3);
    const first = await events.listEvents({ aggregateId: userId, pageSize: 2 });
    expect(first.events.map((e) => e.sequence)).toEqual(all.slice(0, 2));
    expect(first.details?.nextPageToken).not.toMatch(/^$|^\d+$/);
    const second = await events.listEvents({ aggregateId: userId, pageSize: 2, pageToken: first.details!.nextPageToken });
    expect(second.events.map((e) => e.sequence)).toEqual(all.slice(2));
    expect(second.details?.nextPageToken).toBe("");
    const error = await failure(events.listEvents({ pageToken: "forged" }));
    expect(error).toMatchObject({ code: Code.InvalidArgument, reason: "page_token.invalid", fields: ["page_token"] });
  });

  it("shows an organization owner only their organization's events", async () => {
    const admin = { token: t.server.adminToken };
    const orgs = t.clients.client(OrganizationService, "connect-json-http1", admin);
    const { organizationId } = await orgs.createOrganization({ name: "Scoped" });
    const users = t.clients.client(UserService, "connect-json-http1", { ...admin, orgId: organizationId });
    const { userId } = await users.createMachineUser({ userName: "scoped-owner", name: "Owner" });
    await orgs.addOrganizationMember({ userId, roles: ["ORG_OWNER"] }, { headers: { "x-service-orgid": organizationId } });
    const { token } = await users.addPersonalAccessToken({ userId });
    const { events } = await t.clients.client(EventService, "connect-json-http1", { token }).listEvents({});
    expect(events.length).toBeGreaterThan(0);
    expect(new Set(events.map((e) => e.resourceOwner))).toEqual(new Set([organizationId]));
  });
});
