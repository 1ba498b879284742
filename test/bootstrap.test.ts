import { statSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { EventService } from "../gen/gatehouse/admin/v1/event_pb.js";
import { InstanceService } from "../gen/gatehouse/admin/v1/instance_pb.js";
import { OrganizationService } from "../gen/gatehouse/admin/v1/organization_pb.js";
import { Clients } from "./support/clients.js";
import { startTestServer, type TestServer } from "./support/server.js";

const servers: TestServer[] = [];
afterAll(async () => {
  const last = servers.at(-1);
  await last?.dispose();
});

describe("bootstrap", () => {
  it("happens once, writes the admin token 0600 without logging it, and a restart keeps all data", async () => {
    const first = await startTestServer();
    servers.push(first);
    const mode = (file: string) => statSync(join(first.dataDir, file)).mode & 0o777;
    expect(mode("admin.pat")).toBe(0o600);
    expect(mode("master.key")).toBe(0o600);
    expect(mode("gatehouse.db")).toBe(0o600);
    expect(first.adminToken).toMatch(/^gh1\./);
    // The log names the file, never the token.
    expect(first.logs.text).toContain(join(first.dataDir, "admin.pat"));
    expect(first.logs.text).not.toContain(first.adminToken.split(".")[2]);

    let clients = new Clients(first.url);
    const { instanceId } = await clients.client(InstanceService, "connect-json-http1", { token: first.adminToken }).getInstance({});
    const { organizationId } = await clients
      .client(OrganizationService, "connect-json-http1", { token: first.adminToken })
      .createOrganization({ name: "Survives restarts" });
    const { details: before } = await clients.client(EventService, "connect-json-http1", { token: first.adminToken }).listEvents({});
    clients.close();
    await first.stop();

    const second = await startTestServer({ dataDir: first.dataDir });
    servers.push(second);
    expect(second.adminToken).toBe(first.adminToken);
    expect(second.logs.text).toContain("instance already bootstrapped");
    clients = new Clients(second.url);
    const again = await clients.client(InstanceService, "grpc-h2c", { token: second.adminToken }).getInstance({});
    expect(again.instanceId).toBe(instanceId);
    const { organization } = await clients
      .client(OrganizationService, "grpc-h2c", { token: second.adminToken })
      .getOrganization({ organizationId });
    expect(organization?.name).toBe("Survives restarts");
    // No second bootstrap: the log has exactly as many events as before the restart.
    const { details: after } = await clients.client(EventService, "grpc-h2c", { token: second.adminToken }).listEvents({});
    expect(after?.totalResult).toBe(before?.totalResult);
    clients.close();
  });

  it("records the bootstrap in the event log as the system actor", async () => {
    const server = await startTestServer();
    const clients = new Clients(server.url);
    const { events } = await clients.client(EventService, "connect-json-http1", { token: server.adminToken }).listEvents({});
    expect(events.map((e) => e.eventType)).toEqual([
      "instance.added",
      "instance.password_policy.added",
      "org.added",
      "user.machine.added",
      "instance.member.added",
      "org.member.added",
      "user.pat.added",
    ]);
    expect(new Set(events.map((e) => e.actor))).toEqual(new Set(["system"]));
    clients.close();
    await server.dispose();
  });
});
