import { describe, expect, it } from "vitest";
import { EventService } from "../../gen/gatehouse/admin/v1/event_pb.js";
import { InstanceService } from "../../gen/gatehouse/admin/v1/instance_pb.js";
import { OrganizationService } from "../../gen/gatehouse/admin/v1/organization_pb.js";
import { UserService } from "../../gen/gatehouse/admin/v1/user_pb.js";
import { PROTOCOLS } from "../support/clients.js";
import { useTestServer } from "../support/server.js";

const t = useTestServer();

describe.each(PROTOCOLS)("every implemented RPC over %s on the one port", (protocol) => {
  const as = (token: string, orgId?: string) => ({ token, ...(orgId ? { orgId } : {}) });

  it("runs the instance, organization, user and event RPCs", async () => {
    const instance = t.clients.client(InstanceService, protocol, as(t.server.adminToken));
    const orgs = t.clients.client(OrganizationService, protocol, as(t.server.adminToken));
    const { instanceId, defaultOrganizationId, details: instanceDetails } = await instance.getInstance({});
    expect(instanceId).not.toBe("");
    expect(instanceDetails?.resourceOwner).toBe(instanceId);

    const { organizationId, details } = await orgs.createOrganization({ name: `Org over ${protocol}` });
    expect(details?.resourceOwner).toBe(organizationId);
    expect(details?.creationDate).toEqual(details?.changeDate);
    const { organization } = await orgs.getOrganization({ organizationId });
    expect(organization?.name).toBe(`Org over ${protocol}`);

    const usersThere = t.clients.client(UserService, protocol, as(t.server.adminToken, organizationId));
    const { userId } = await usersThere.createMachineUser({ userName: `bot-${protocol}`, name: "Bot", description: "test" });
    const { user } = await usersThere.getUser({ userId });
    expect(user?.userName).toBe(`bot-${protocol}`);
    expect(user?.type.case).toBe("machine");

    const { token, tokenId } = await usersThere.addPersonalAccessToken({ userId });
    expect(token).toContain(tokenId);

    await orgs.addOrganizationMember({ userId, roles: ["ORG_OWNER_VIEWER"] }, { headers: { "x-service-orgid": organizationId } });
    await instance.addInstanceMember({ userId, roles: ["IAM_OWNER_VIEWER"] });

    // The new token works, and its holder reads what its roles allow.
    const botInstance = t.clients.client(InstanceService, protocol, as(token));
    expect((await botInstance.getInstance({})).instanceId).toBe(instanceId);
    const botUsers = t.clients.client(UserService, protocol, as(token));
    expect((await botUsers.getUser({ userId })).user?.userId).toBe(userId);

    const events = t.clients.client(EventService, protocol, as(t.server.adminToken));
    const { events: userEvents } = await events.listEvents({ aggregateType: "user", aggregateId: userId });
    expect(userEvents.map((e) => e.eventType)).toEqual(["user.machine.added", "user.pat.added"]);
    expect(defaultOrganizationId).not.toBe(organizationId);
  });
});


describe("plain HTTP/1.1 JSON, as curl sends it, on the port that serves gRPC", () => {
  it("answers a Connect unary POST", async () => {
    const response = await fetch(`${t.server.url}/gatehouse.admin.v1.InstanceService/GetInstance`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${t.server.adminToken}` },
      body: "{}",
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("x-request-id")).toMatch(/.+/);
    const body = (await response.json()) as { instanceId: string; details: { sequence: string } };
    expect(body.instanceId).not.toBe("");
    expect(body.details.sequence).toMatch(/^\d+$/);
  });

  it("answers errors with a Connect error body and the HTTP status of the code", async () => {
    const response = await fetch(`${t.server.url}/gatehouse.admin.v1.InstanceService/GetInstance`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    expect(response.status).toBe(401);
    const body = (await response.json()) as { code: string; details: { type: string; debug: { reason: string } }[] };
    expect(body.code).toBe("unauthenticated");
    expect(body.details[0]?.type).toBe("google.rpc.ErrorInfo");
    expect(body.details[0]?.debug.reason).toBe("auth.missing");
  });

  it("serves Prometheus metrics with calls by procedure and code", async () => {
    const getInstance = (token?: string) =>
      fetch(`${t.server.url}/gatehouse.admin.v1.InstanceService/GetInstance`, {
        method: "POST",
        headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
        body: "{}",
      });
    const calls = async (code: string) => {
      const text = await (await fetch(`${t.server.url}/metrics`)).text();
      const line = new RegExp(`^gatehouse_rpc_calls_total\\{procedure="/gatehouse\\.admin\\.v1\\.InstanceService/GetInstance",code="${code}"\\} (\\d+)$`, "m");
      return { count: Number(line.exec(text)?.[1] ?? 0), text };
    };
    const [okBefore, deniedBefore] = [await calls("ok"), await calls("unauthenticated")];
    // This test's own calls: one answered, one refused.
    expect((await getInstance(t.server.adminToken)).status).toBe(200);
    expect((await getInstance()).status).toBe(401);
    const [okAfter, deniedAfter] = [await calls("ok"), await calls("unauthenticated")];
    expect([okAfter.count - okBefore.count, deniedAfter.count - deniedBefore.count]).toEqual([1, 1]);
    expect(okAfter.text).toContain("gatehouse_rpc_duration_seconds_bucket");
  });

  it("answers an unknown path with 404", async () => {
    const response = await fetch(`${t.server.url}/nope`, { method: "POST" });
    expect(response.status).toBe(404);
  });
});
