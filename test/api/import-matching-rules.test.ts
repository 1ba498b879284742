import { beforeAll, describe, expect, it } from "vitest";
import { IdentityProviderService } from "../../gen/gatehouse/admin/v1/identity_provider_pb.js";
import { OrganizationService } from "../../gen/gatehouse/admin/v1/organization_pb.js";
import { OnConflict, UserService } from "../../gen/gatehouse/admin/v1/user_pb.js";
import { importedUser, resultShape } from "../support/import.js";
import { eventsOf } from "../support/login-client.js";
import { useTestServer } from "../support/server.js";

/**
 * Which existing user an imported user is (user.proto, ImportHumanUsers "Conflicts"): found by `external_id` when the
 * file gives one, else by user name; SKIP and UPDATE act only on a human of the selected organization, and a user name
 * held by anyone else is already_exists whatever the external id says.
 */
const t = useTestServer();
let orgId: string;
let otherOrgId: string;
beforeAll(async () => {
  const orgs = t.clients.client(OrganizationService, "connect-json-http1", { token: t.server.adminToken });
  ({ organizationId: orgId } = await orgs.createOrganization({ name: "Import matching" }));
  ({ organizationId: otherOrgId } = await orgs.createOrganization({ name: "Import matching elsewhere" }));
});

const users = (org = orgId) => t.clients.client(UserService, "connect-json-http1", { token: t.server.adminToken, orgId: org });
let n = 0;
const fresh = (prefix: string) => `match-${prefix}-${++n}`;
const importAs = async (mode: OnConflict, ...rows: Parameters<typeof importedUser>[]) =>
  (await users().importHumanUsersBatch({ users: rows.map((row) => importedUser(...row)), onConflict: mode })).results.map(resultShape);

describe("an imported user found by its external id", () => {
  it("whose user name another user holds is already_exists under every mode, and neither user changes", async () => {
    const [owner, holder] = [fresh("owner"), fresh("holder")];
    const [ownerId, holderId] = (await importAs(OnConflict.FAIL, [owner, {}, `src-${owner}`], [holder])).map((r) => r.userId);
    for (const mode of [OnConflict.FAIL, OnConflict.SKIP, OnConflict.UPDATE]) {
      expect(await importAs(mode, [holder, { profile: { firstName: "Taken", lastName: "Over" } }, `src-${owner}`])).toMatchObject([
        { outcome: "failed", code: "already_exists", reason: "user.already_exists" },
      ]);
    }
    for (const userId of [ownerId!, holderId!]) expect(await eventsOf(t, "user", userId)).toHaveLength(1);
    // The creation's event names the external id it was imported under (and none when none was given).
    expect((await eventsOf(t, "user", ownerId!))[0]!.payload).toMatchObject({ externalId: `src-${owner}` });
    expect(Object.keys((await eventsOf(t, "user", holderId!))[0]!.payload)).not.toContain("externalId");
  });

  it("of another organization's user is no match: that user's name is a plain conflict, and it is never skipped or updated", async () => {
    const name = fresh("foreign");
    const { results } = await users(otherOrgId).importHumanUsersBatch({ users: [importedUser(name, {}, `src-${name}`)] });
    const foreignId = results[0]!.userId;
    for (const mode of [OnConflict.SKIP, OnConflict.UPDATE]) {
      expect(await importAs(mode, [name, { profile: { firstName: "Not", lastName: "Yours" } }, `src-${name}`])).toMatchObject([
        { outcome: "failed", code: "already_exists", reason: "user.already_exists" },
      ]);
    }
    expect(await eventsOf(t, "user", foreignId)).toHaveLength(1);
  });
});

describe("an imported user without an external id", () => {
  it("is found by user name even when the existing user has one: SKIP names it, UPDATE changes it and keeps its external id", async () => {
    const name = fresh("by-name");
    const { userId } = (await importAs(OnConflict.FAIL, [name, {}, `src-${name}`]))[0]!;
    expect(await importAs(OnConflict.SKIP, [name])).toEqual([{ index: 0, outcome: "skipped", userId }]);
    expect(await importAs(OnConflict.UPDATE, [name, { profile: { firstName: "Renewed", lastName: name } }])).toEqual([{ index: 0, outcome: "updated", userId }]);
    // Still found by its external id.
    expect(await importAs(OnConflict.SKIP, [name, {}, `src-${name}`])).toEqual([{ index: 0, outcome: "skipped", userId }]);
  });
});

describe("a re-run mixed with new users", () => {
  it("answers the unchanged user unchanged and appends no event for it, while the new user of the same chunk is created", async () => {
    const [existing, added] = [fresh("again"), fresh("new")];
    const { userId } = (await importAs(OnConflict.FAIL, [existing, {}, `src-${existing}`]))[0]!;
    expect(await importAs(OnConflict.UPDATE, [existing, {}, `src-${existing}`], [added, {}, `src-${added}`])).toMatchObject([
      { outcome: "unchanged", userId },
      { outcome: "created" },
    ]);
    expect(await eventsOf(t, "user", userId!)).toHaveLength(1);
  });
});

describe("what the checks read for a chunk", () => {
  it("an identity provider the users' links name is found for every user of the chunk, as CreateHumanUser finds it", async () => {
    const idps = t.clients.client(IdentityProviderService, "connect-json-http1", { token: t.server.adminToken, orgId });
    const { idpId } = await idps.createIdentityProvider({ name: "Import SSO", issuer: "https://import-sso.example.com", clientId: "import-client", clientSecret: "import-secret-value" });
    const [first, second] = [fresh("linked"), fresh("linked")];
    const results = await importAs(OnConflict.FAIL, [first, { idps: [{ configId: idpId, externalUserId: `ext-${first}` }] }], [second, { idps: [{ configId: idpId, externalUserId: `ext-${second}` }] }]);
    expect(results).toMatchObject([{ outcome: "created" }, { outcome: "created" }]);
    const added = await eventsOf(t, "user", results[0]!.userId!);
    expect(JSON.stringify(added)).toContain(`ext-${first}`);
  });

  it("an IDP link another user holds fails that user alone (the commit's refusal, which planning cannot see), and the others of its chunk are created", async () => {
    const idps = t.clients.client(IdentityProviderService, "connect-json-http1", { token: t.server.adminToken, orgId });
    const { idpId } = await idps.createIdentityProvider({ name: "Taken SSO", issuer: "https://taken-sso.example.com", clientId: "taken-client", clientSecret: "taken-secret-value" });
    const holder = fresh("holder");
    await users().createHumanUser({ userName: holder, profile: { firstName: "H", lastName: "H" }, email: { email: `${holder}@example.com`, isEmailVerified: true }, idps: [{ configId: idpId, externalUserId: `ext-${holder}` }] });
    const [before, taker, after] = [fresh("beside"), fresh("taker"), fresh("beside")];
    expect(await importAs(OnConflict.FAIL, [before], [taker, { idps: [{ configId: idpId, externalUserId: `ext-${holder}` }] }], [after])).toMatchObject([
      { outcome: "created" },
      { outcome: "failed", code: "already_exists", reason: "user.idp_link.already_exists" },
      { outcome: "created" },
    ]);
  });
});
