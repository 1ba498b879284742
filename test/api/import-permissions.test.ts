import { Code } from "@connectrpc/connect";
import { beforeAll, describe, expect, it } from "vitest";
import { OrganizationService } from "../../gen/gatehouse/admin/v1/organization_pb.js";
import { OnConflict, UserService } from "../../gen/gatehouse/admin/v1/user_pb.js";
import { failure } from "../support/errors.js";
import { importedUser, resultShape } from "../support/import.js";
import { useTestServer } from "../support/server.js";
import { type Actor, createActor } from "../support/world.js";

/**
 * Who may import (issue 14): CreateHumanUser's permission (`user.write` in the selected organization), checked before
 * a single user is read; `x-service-orgid` selects the organization as for every call; updating an existing user acts
 * on its credentials, so the privilege ceiling applies to each user an UPDATE changes.
 */
const t = useTestServer();
let orgId: string;
let strangerOrgId: string;
let viewer: Actor;
let manager: Actor;
let n = 0;
const fresh = (prefix: string) => `${prefix}-${++n}`;

beforeAll(async () => {
  const orgs = t.clients.client(OrganizationService, "connect-json-http1", { token: t.server.adminToken });
  ({ organizationId: orgId } = await orgs.createOrganization({ name: "Import rights" }));
  ({ organizationId: strangerOrgId } = await orgs.createOrganization({ name: "Import elsewhere" }));
  viewer = await createActor(t.clients, t.server.adminToken, orgId, "import-viewer", ["ORG_OWNER_VIEWER"]);
  manager = await createActor(t.clients, t.server.adminToken, orgId, "import-manager", ["ORG_USER_MANAGER"]);
});

const usersAs = (actor: { token: string }, protocol: "connect-json-http1" | "grpc-h2c" = "connect-json-http1", org?: string) =>
  t.clients.client(UserService, protocol, { token: actor.token, ...(org ? { orgId: org } : {}) });
const admin = () => usersAs({ token: t.server.adminToken }, "connect-json-http1", orgId);

/** A stream that sends nothing until released: what it answers came before any user was read. */
async function streamWithoutMessages(users: ReturnType<typeof usersAs>) {
  let release = () => {};
  const held = new Promise<void>((resolve) => (release = resolve));
  async function* requests() {
    await held;
  }
  try {
    for await (const _ of users.importHumanUsers(requests())) return "answered";
    return "ended";
  } finally {
    release();
  }
}

describe("permission", () => {
  it("refuses a caller without user.write before reading a single user, on the stream and the batch", async () => {
    expect(await failure(streamWithoutMessages(usersAs(viewer, "grpc-h2c")))).toMatchObject({ code: Code.PermissionDenied, reason: "permission.denied" });
    const name = fresh("refused");
    expect(await failure(usersAs(viewer).importHumanUsersBatch({ users: [importedUser(name)] }))).toMatchObject({ code: Code.PermissionDenied, reason: "permission.denied" });
    expect((await admin().listUsers({ userName: name })).users).toEqual([]);
  });

  it("refuses an organization the caller has no role in, whether it exists or not (x-service-orgid)", async () => {
    for (const org of [strangerOrgId, "no-such-organization"]) {
      expect(await failure(streamWithoutMessages(usersAs(manager, "grpc-h2c", org)))).toMatchObject({ code: Code.PermissionDenied, reason: "organization.access_denied" });
      expect(await failure(usersAs(manager, "connect-json-http1", org).importHumanUsersBatch({ users: [importedUser(fresh("x"))] }))).toMatchObject({
        code: Code.PermissionDenied,
        reason: "organization.access_denied",
      });
    }
  });

  it("lets a user manager import into its organization, and the instance owner into the one it selects", async () => {
    const mine = await usersAs(manager).importHumanUsersBatch({ users: [importedUser(fresh("by-manager"))] });
    const selected = await usersAs({ token: t.server.adminToken }, "grpc-h2c", strangerOrgId).importHumanUsersBatch({ users: [importedUser(fresh("by-admin"))] });
    const ownerOf = async (userId: string, org: string) => (await usersAs({ token: t.server.adminToken }, "connect-json-http1", org).getUser({ userId })).user?.details?.resourceOwner;
    expect(await ownerOf(mine.results[0]!.userId, orgId)).toBe(orgId);
    expect(await ownerOf(selected.results[0]!.userId, strangerOrgId)).toBe(strangerOrgId);
  });
});

describe("the privilege ceiling", () => {
  it("keeps an update from a user holding more than the importer, and only that user", async () => {
    const [owner, plain] = [fresh("owner"), fresh("plain")];
    const created = await admin().importHumanUsersBatch({ users: [importedUser(owner), importedUser(plain)] });
    const [ownerId, plainId] = created.results.map((r) => r.userId);
    await t.clients.client(OrganizationService, "connect-json-http1", { token: t.server.adminToken, orgId }).addOrganizationMember({ userId: ownerId!, roles: ["ORG_OWNER"] });
    const changed = { profile: { firstName: "Taken", lastName: "Over" }, hashedPassword: { value: "$2b$04$Ie2y6PSnAUxBWobJWvg4we4fjNZ8UZoT1963VWkyhwHh15cZAPoSO" } };
    const { results } = await usersAs(manager).importHumanUsersBatch({ users: [importedUser(owner, changed), importedUser(plain, changed)], onConflict: OnConflict.UPDATE });
    expect(results.map(resultShape)).toMatchObject([
      { outcome: "failed", code: "permission_denied", reason: "principal.privileged" },
      { outcome: "updated", userId: plainId },
    ]);
    const { user } = await admin().getUser({ userId: ownerId! });
    expect(user?.type.case === "human" && user.type.value.profile?.firstName).toBe("Imported");
    // Unchanged and skipped users are not acted on: no ceiling to pass.
    const again = await usersAs(manager).importHumanUsersBatch({ users: [importedUser(owner)], onConflict: OnConflict.UPDATE });
    expect(again.results.map(resultShape)).toMatchObject([{ outcome: "unchanged", userId: ownerId }]);
    const skipped = await usersAs(manager).importHumanUsersBatch({ users: [importedUser(owner, changed)], onConflict: OnConflict.SKIP });
    expect(skipped.results.map(resultShape)).toMatchObject([{ outcome: "skipped", userId: ownerId }]);
  });
});
