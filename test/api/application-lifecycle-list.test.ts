import { Code } from "@connectrpc/connect";
import { beforeAll, describe, expect, it } from "vitest";
import { ApplicationService, ApplicationState } from "../../gen/gatehouse/admin/v1/application_pb.js";
import { ProjectService } from "../../gen/gatehouse/admin/v1/project_pb.js";
import { PROTOCOLS, type Protocol } from "../support/clients.js";
import { failure } from "../support/errors.js";
import { useTestServer } from "../support/server.js";

/** ListApplications is paged (opaque tokens, total count, creation order) and filters by state (issue 16). */
const t = useTestServer();
let projectId: string;
let bigProjectId: string;
const created: string[] = [];

const apps = (protocol: Protocol = "connect-json-http1") => t.clients.client(ApplicationService, protocol, { token: t.server.adminToken });

beforeAll(async () => {
  const projects = t.clients.client(ProjectService, "connect-json-http1", { token: t.server.adminToken });
  ({ projectId } = await projects.createProject({ name: "Paged apps" }));
  ({ projectId: bigProjectId } = await projects.createProject({ name: "Many apps" }));
  for (let i = 0; i < 5; i++) created.push((await apps().createApiApplication({ projectId, name: `App ${i}` })).appId);
  await apps().deactivateApplication({ projectId, appId: created[1]! });
  await apps().deactivateApplication({ projectId, appId: created[3]! });
  for (let i = 0; i < 101; i++) await apps().createApiApplication({ projectId: bigProjectId, name: `Bulk ${i}` });
});

describe.each(PROTOCOLS)("ListApplications over %s", (protocol) => {
  it("walks the pages in creation order with opaque tokens and the total on every page", async () => {
    const seen: string[] = [];
    const totals: bigint[] = [];
    let pageToken = "";
    let pages = 0;
    do {
      const page = await apps(protocol).listApplications({ projectId, pageSize: 2, pageToken });
      expect(page.apps.length).toBeLessThanOrEqual(2);
      seen.push(...page.apps.map((app) => app.appId));
      totals.push(page.details!.totalResult);
      pageToken = page.details!.nextPageToken;
      // Opaque: no id, name or plain number shows through.
      if (pageToken) expect(pageToken).not.toMatch(/^\d+$|App|seq/);
      pages++;
    } while (pageToken && pages < 10);
    expect(seen).toEqual(created);
    expect(pages).toBe(3);
    expect(totals).toEqual([5n, 5n, 5n]);
  });

  it("filters by state, counting only the matching ones", async () => {
    const inactive = await apps(protocol).listApplications({ projectId, state: ApplicationState.INACTIVE });
    expect(inactive.apps.map((app) => [app.appId, app.state])).toEqual([
      [created[1], ApplicationState.INACTIVE],
      [created[3], ApplicationState.INACTIVE],
    ]);
    expect(inactive.details?.totalResult).toBe(2n);
    const active = await apps(protocol).listApplications({ projectId, state: ApplicationState.ACTIVE, pageSize: 2 });
    expect(active.apps.map((app) => app.appId)).toEqual([created[0], created[2]]);
    expect(active.details?.totalResult).toBe(3n);
    const rest = await apps(protocol).listApplications({ projectId, state: ApplicationState.ACTIVE, pageToken: active.details!.nextPageToken });
    expect(rest.apps.map((app) => app.appId)).toEqual([created[4]]);
  });

  it("keeps the old behaviour for callers that send no page size: 100 per page", async () => {
    const first = await apps(protocol).listApplications({ projectId: bigProjectId });
    expect(first.apps).toHaveLength(100);
    expect(first.details?.totalResult).toBe(101n);
    const second = await apps(protocol).listApplications({ projectId: bigProjectId, pageToken: first.details!.nextPageToken });
    expect(second.apps.map((app) => app.name)).toEqual(["Bulk 100"]);
    expect(second.details?.nextPageToken).toBe("");
  });

  it("rejects a forged page token and an oversized page", async () => {
    expect(await failure(apps(protocol).listApplications({ projectId, pageToken: "not-a-token" }))).toMatchObject({
      code: Code.InvalidArgument,
      reason: "page_token.invalid",
    });
    expect(await failure(apps(protocol).listApplications({ projectId, pageSize: 1001 }))).toMatchObject({ code: Code.InvalidArgument, fields: ["page_size"] });
  });
});
