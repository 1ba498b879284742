import { Code } from "@connectrpc/connect";
import { beforeAll, describe, expect, it } from "vitest";
import { UserService } from "../../gen/gatehouse/admin/v1/user_pb.js";
import { PROTOCOLS } from "../support/clients.js";
import { failure } from "../support/errors.js";
import { type Answer, callRpc, describeAnswer, describedMethods, inBatches, protocolFor, TransportCache } from "../support/matrix-call.js";
import { unknownIdLike } from "../support/matrix-fresh.js";
import { answerMatches, expectedOutcome, type Row, rowLabel } from "../support/matrix-outcomes.js";
import { requests as r } from "../support/matrix-requests.js";
import { buildMatrixWorld, COLUMNS, type Column, callOptions, type MatrixWorld, STRANGERS } from "../support/matrix-world.js";
import { useTestServer } from "../support/server.js";

/*
 * Who may call what, written from API.md, the service and rpc comments of proto/gatehouse/admin/v1 and
 * the meaning of the roles (readers read, writers write, viewers never write), NOT from the code.
 * The target scope is organization A, its project P1 and P1's grant G1 (see matrix-world.ts).
 */
const IAM_READ: Column[] = ["IAM_OWNER", "IAM_OWNER_VIEWER"];
const IAM_WRITE: Column[] = ["IAM_OWNER"];
const ORG_READ: Column[] = [...IAM_READ, "ORG_OWNER", "ORG_OWNER_VIEWER", "ORG_USER_MANAGER", "ORG_SETTINGS_MANAGER"];
const ORG_OWNERS: Column[] = ["IAM_OWNER", "ORG_OWNER"];
const USER_READ: Column[] = [...IAM_READ, "ORG_OWNER", "ORG_OWNER_VIEWER", "ORG_USER_MANAGER"];
const USER_WRITE: Column[] = ["IAM_OWNER", "ORG_OWNER", "ORG_USER_MANAGER"];
const IDP_READ: Column[] = [...IAM_READ, "ORG_OWNER", "ORG_OWNER_VIEWER", "ORG_SETTINGS_MANAGER"];
const IDP_WRITE: Column[] = ["IAM_OWNER", "ORG_OWNER", "ORG_SETTINGS_MANAGER"];
const EVENTS_READ: Column[] = [...IAM_READ, "ORG_OWNER", "ORG_OWNER_VIEWER"];
const PROJECT_READ: Column[] = [...IAM_READ, "ORG_OWNER", "ORG_OWNER_VIEWER", "PROJECT_OWNER", "PROJECT_OWNER_VIEWER"];
const PROJECT_WRITE: Column[] = ["IAM_OWNER", "ORG_OWNER", "PROJECT_OWNER"];
const GRANT_READ: Column[] = [...PROJECT_READ, "PROJECT_GRANT_OWNER", "PROJECT_GRANT_OWNER_VIEWER"];
const GRANT_WRITE: Column[] = [...PROJECT_WRITE, "PROJECT_GRANT_OWNER"];
/** An ORG_OWNER of C acting in C: it may create and list there, and finds nothing of A there. */
const OWN: Column = "otherOrgOwner→ownOrg";
const HIDDEN = { notFound: [OWN] };

const I = "gatehouse.admin.v1.InstanceService/";
const O = "gatehouse.admin.v1.OrganizationService/";
const U = "gatehouse.admin.v1.UserService/";
const P = "gatehouse.admin.v1.ProjectService/";
const A = "gatehouse.admin.v1.ApplicationService/";
const D = "gatehouse.admin.v1.IdentityProviderService/";
const S = "gatehouse.admin.v1.SmtpService/";

/**
 * Credentials and identity of a target user (service comment of UserService): `user.write` and the
 * privilege ceiling. A target holding ORG_OWNER of A is covered by ORG_OWNER and IAM_OWNER, not by
 * ORG_USER_MANAGER; a target holding IAM_OWNER only by IAM_OWNER.
 */
const overOrgOwner = { allowed: ORG_OWNERS, privileged: ["ORG_USER_MANAGER"] as Column[], ...HIDDEN };
const overIamOwner = { allowed: IAM_WRITE, privileged: ["ORG_OWNER", "ORG_USER_MANAGER"] as Column[], ...HIDDEN };
const ceilingRows = (rpc: string, build: (kind: "plain" | "orgOwner" | "iamOwner") => Row["request"], self: NonNullable<Row["self"]>): Row[] => [
  { rpc, variant: "target without roles", write: true, request: build("plain"), allowed: USER_WRITE, ...HIDDEN, self },
  { rpc, variant: "target is ORG_OWNER of A", write: true, request: build("orgOwner"), ...overOrgOwner },
  { rpc, variant: "target is IAM_OWNER", write: true, request: build("iamOwner"), ...overIamOwner },
];

const TABLE: Row[] = [
  { rpc: `${I}GetInstance`, write: false, request: r.getInstance, allowed: IAM_READ },
  { rpc: `${I}AddInstanceMember`, write: true, request: r.addInstanceMember, allowed: IAM_WRITE },
  { rpc: `${I}ListInstanceMembers`, write: false, request: r.listInstanceMembers, allowed: IAM_READ },
  { rpc: `${I}RemoveInstanceMember`, write: true, request: r.removeInstanceMember, allowed: IAM_WRITE },
  { rpc: `${I}GetLockoutPolicy`, write: false, request: r.getLockoutPolicy, allowed: IAM_READ },
  { rpc: `${I}SetLockoutPolicy`, write: true, request: r.setLockoutPolicy, allowed: IAM_WRITE },

  { rpc: `${O}CreateOrganization`, write: true, request: r.createOrganization, allowed: IAM_WRITE },
  // Names A by id: an owner of C holds no org.read in A, wherever it acts.
  { rpc: `${O}GetOrganization`, write: false, request: r.getOrganization, allowed: ORG_READ },
  // C's owner passes the check in C; the user, A's, is then unknown to it (test/access/foreign-member-rules.test.ts).
  { rpc: `${O}AddOrganizationMember`, write: true, request: r.addOrganizationMember, allowed: [...ORG_OWNERS, OWN] },
  // Instance scope: `iam.read` (OrganizationService comment), whatever organization is selected.
  { rpc: `${O}ListOrganizations`, write: false, request: r.listOrganizations, allowed: IAM_READ },
  // Who holds rights in an organization is part of reading it: `org.read`; an owner of C lists C's.
  { rpc: `${O}ListOrganizationMembers`, write: false, request: r.listOrganizationMembers, allowed: [...ORG_READ, OWN] },
  { rpc: `${O}RemoveOrganizationMember`, write: true, request: r.removeOrganizationMember, allowed: ORG_OWNERS, ...HIDDEN },
  // Shuts out every user of the organization: an instance decision (`iam.write`), never an organization's own.
  { rpc: `${O}DeactivateOrganization`, write: true, request: r.deactivateOrganization, allowed: IAM_WRITE },
  { rpc: `${O}ReactivateOrganization`, write: true, request: r.reactivateOrganization, allowed: IAM_WRITE },

  { rpc: `${U}CreateHumanUser`, write: true, request: r.createHumanUser, allowed: [...USER_WRITE, OWN] },
  // The bulk import (issue 14): CreateHumanUser's permission, checked once before any user is read.
  { rpc: `${U}ImportHumanUsers`, write: true, request: r.importHumanUsers, allowed: [...USER_WRITE, OWN] },
  { rpc: `${U}ImportHumanUsersBatch`, write: true, request: r.importHumanUsers, allowed: [...USER_WRITE, OWN] },
  { rpc: `${U}CreateMachineUser`, write: true, request: r.createMachineUser, allowed: [...USER_WRITE, OWN] },
  { rpc: `${U}ListUsers`, write: false, request: r.listUsers, allowed: [...USER_READ, OWN] },
  { rpc: `${U}GetUser`, write: false, request: r.getUser, allowed: USER_READ, ...HIDDEN, self: "allowed" },
  // `user.write` in the USER's organization, whatever organization the caller names: an owner of C is denied.
  { rpc: `${U}VerifyEmail`, write: true, request: r.verifyEmail, allowed: USER_WRITE, self: "allowed" },
  // SetEmail, ResendEmailCode and AddPersonalAccessToken name no exception for the user itself (only the
  // token list and removal do): least privilege, a user without `user.write` is denied on itself too.
  ...ceilingRows(`${U}SetEmail`, r.setEmail, "denied"),
  ...ceilingRows(`${U}ResendEmailCode`, (kind) => r.resendEmailCode(kind, true), "denied").map((row) => ({ ...row, variant: `return_code, ${row.variant}` })),
  // Without return_code the code goes to the user's own mailbox: no credential reaches the caller, no ceiling.
  { rpc: `${U}ResendEmailCode`, variant: "mailed, target is ORG_OWNER of A", write: true, request: r.resendEmailCode("orgOwner", false), allowed: USER_WRITE, ...HIDDEN },
  ...ceilingRows(`${U}AddPersonalAccessToken`, r.addPersonalAccessToken, "denied"),
  ...ceilingRows(`${U}ListPersonalAccessTokens`, r.listPersonalAccessTokens, "allowed"),
  ...ceilingRows(`${U}RemovePersonalAccessToken`, r.removePersonalAccessToken, "allowed"),
  // The state of a target user is its identity: `user.write` and the ceiling. A target without
  // `user.write` is denied on itself; an inactive or locked one cannot even call (its token is refused).
  ...ceilingRows(`${U}DeactivateUser`, r.deactivateUser, "denied"),
  ...ceilingRows(`${U}ReactivateUser`, r.reactivateUser, "unauthenticated"),
  ...ceilingRows(`${U}LockUser`, r.lockUser, "denied"),
  ...ceilingRows(`${U}UnlockUser`, r.unlockUser, "unauthenticated"),
  ...ceilingRows(`${U}RemoveUser`, r.removeUser, "denied"),
  // A password is a credential: `user.write` and the ceiling, as SetEmail.
  ...ceilingRows(`${U}SetPassword`, r.setPassword, "denied"),
  // Issue 15: `user.password.check`, instance-wide, held by IAM_LOGIN_CLIENT and IAM_OWNER only; a user does not
  // check its own password with its token (it has signed in already).
  { rpc: `${U}VerifyPassword`, write: true, request: r.verifyPassword, allowed: ["IAM_OWNER", "IAM_LOGIN_CLIENT"], self: "denied" },

  { rpc: `${P}CreateProject`, write: true, request: r.createProject, allowed: [...ORG_OWNERS, OWN] },
  { rpc: `${P}GetProject`, write: false, request: r.getProject, allowed: PROJECT_READ, ...HIDDEN },
  { rpc: `${P}AddProjectRole`, write: true, request: r.addProjectRole, allowed: PROJECT_WRITE, ...HIDDEN },
  { rpc: `${P}AddProjectMember`, write: true, request: r.addProjectMember, allowed: PROJECT_WRITE, ...HIDDEN },
  { rpc: `${P}CreateProjectGrant`, write: true, request: r.createProjectGrant, allowed: PROJECT_WRITE, ...HIDDEN },
  { rpc: `${P}GetProjectGrant`, write: false, request: r.getProjectGrant, allowed: GRANT_READ, ...HIDDEN },
  { rpc: `${P}AddProjectGrantMember`, write: true, request: r.addProjectGrantMember, allowed: GRANT_WRITE, ...HIDDEN },
  { rpc: `${P}ListProjectGrantMembers`, write: false, request: r.listProjectGrantMembers, allowed: GRANT_READ, ...HIDDEN },
  { rpc: `${P}RemoveProjectGrantMember`, write: true, request: r.removeProjectGrantMember, allowed: GRANT_WRITE, ...HIDDEN },
  // `project.read` in the selected organization; a project owner (also of a sibling project) lists the
  // projects it holds a role on; an owner of C lists C's.
  { rpc: `${P}ListProjects`, write: false, request: r.listProjects, allowed: [...PROJECT_READ, "otherProjectOwner", OWN] },
  // Whole-project changes need `project.write`: on a project of the cell's own where the project and
  // grant columns hold their roles (a grant owner administers its grant, never the project).
  { rpc: `${P}UpdateProject`, write: true, request: r.updateProject, allowed: PROJECT_WRITE, ...HIDDEN },
  { rpc: `${P}DeactivateProject`, write: true, request: r.ownProject((projectId) => ({ projectId })), allowed: PROJECT_WRITE, ...HIDDEN },
  { rpc: `${P}ReactivateProject`, write: true, request: r.ownProject((projectId) => ({ projectId }), true), allowed: PROJECT_WRITE, ...HIDDEN },
  { rpc: `${P}RemoveProject`, write: true, request: r.ownProject((projectId) => ({ projectId })), allowed: PROJECT_WRITE, ...HIDDEN },
  { rpc: `${P}ListProjectRoles`, write: false, request: r.listProjectRoles, allowed: PROJECT_READ, ...HIDDEN },
  { rpc: `${P}RemoveProjectRole`, write: true, request: r.removeProjectRole, allowed: PROJECT_WRITE, ...HIDDEN },
  // Who holds rights in a project is part of reading it (`project.read`), like organization members.
  { rpc: `${P}ListProjectMembers`, write: false, request: r.listProjectMembers, allowed: PROJECT_READ, ...HIDDEN },
  { rpc: `${P}RemoveProjectMember`, write: true, request: r.removeProjectMember, allowed: PROJECT_WRITE, ...HIDDEN },
  // Every grant of the project: `project.grant.read` for the whole project, which a grant's own roles do not give.
  { rpc: `${P}ListProjectGrants`, write: false, request: r.listProjectGrants, allowed: PROJECT_READ, ...HIDDEN },
  { rpc: `${P}UpdateProjectGrant`, write: true, request: r.updateProjectGrant, allowed: PROJECT_WRITE, ...HIDDEN },
  { rpc: `${P}RemoveProjectGrant`, write: true, request: r.removeProjectGrant, allowed: PROJECT_WRITE, ...HIDDEN },

  { rpc: `${A}CreateOidcApplication`, write: true, request: r.createOidcApplication, allowed: PROJECT_WRITE, ...HIDDEN },
  { rpc: `${A}CreateApiApplication`, write: true, request: r.createApiApplication, allowed: PROJECT_WRITE, ...HIDDEN },
  { rpc: `${A}CreateSamlApplication`, write: true, request: r.createSamlApplication, allowed: PROJECT_WRITE, ...HIDDEN },
  { rpc: `${A}GetApplication`, write: false, request: r.getApplication, allowed: PROJECT_READ, ...HIDDEN },
  { rpc: `${A}ListApplications`, write: false, request: r.listApplications, allowed: PROJECT_READ, ...HIDDEN },
  { rpc: `${A}UpdateApplication`, write: true, request: r.updateApplication, allowed: PROJECT_WRITE, ...HIDDEN },
  // Lifecycle of an app: `project.app.write` for the project, like UpdateApplication.
  { rpc: `${A}DeactivateApplication`, write: true, request: r.freshApplication, allowed: PROJECT_WRITE, ...HIDDEN },
  { rpc: `${A}ReactivateApplication`, write: true, request: r.reactivateApplication, allowed: PROJECT_WRITE, ...HIDDEN },
  { rpc: `${A}RemoveApplication`, write: true, request: r.freshApplication, allowed: PROJECT_WRITE, ...HIDDEN },
  { rpc: `${A}RegenerateClientSecret`, write: true, request: r.freshApplication, allowed: PROJECT_WRITE, ...HIDDEN },

  { rpc: `${D}CreateIdentityProvider`, write: true, request: r.createIdentityProvider(false), allowed: [...IDP_WRITE, OWN] },
  { rpc: `${D}CreateIdentityProvider`, variant: "instance_level", write: true, request: r.createIdentityProvider(true), allowed: IAM_WRITE },
  { rpc: `${D}GetIdentityProvider`, write: false, request: r.getIdentityProvider, allowed: IDP_READ, ...HIDDEN },
  { rpc: `${D}ListIdentityProviders`, write: false, request: r.listIdentityProviders, allowed: [...IDP_READ, OWN] },
  { rpc: `${D}UpdateIdentityProvider`, write: true, request: r.updateIdentityProvider, allowed: IDP_WRITE, ...HIDDEN },
  { rpc: `${D}RemoveIdentityProvider`, write: true, request: r.removeIdentityProvider(false), allowed: IDP_WRITE, ...HIDDEN },
  // An instance-level IDP needs `iam.write` too; to org.idp writers without it, it is not their organization's (not_found).
  {
    rpc: `${D}RemoveIdentityProvider`,
    variant: "instance_level",
    write: true,
    request: r.removeIdentityProvider(true),
    allowed: IAM_WRITE,
    notFound: ["ORG_OWNER", "ORG_SETTINGS_MANAGER", OWN],
  },

  // "Every call needs iam.write (IAM_OWNER)" (SmtpService comment): the viewer does not even read it.
  // Rows run in this order, so the IAM_OWNER cells create, read, change, test and remove one configuration.
  { rpc: `${S}CreateSmtpConfig`, write: true, request: r.createSmtpConfig, allowed: IAM_WRITE },
  { rpc: `${S}GetSmtpConfig`, write: false, request: r.getSmtpConfig, allowed: IAM_WRITE },
  { rpc: `${S}UpdateSmtpConfig`, write: true, request: r.updateSmtpConfig, allowed: IAM_WRITE },
  { rpc: `${S}SetSmtpPassword`, write: true, request: r.setSmtpPassword, allowed: IAM_WRITE },
  { rpc: `${S}TestSmtpConfig`, write: true, request: r.testSmtpConfig, allowed: IAM_WRITE },
  { rpc: `${S}RemoveSmtpConfig`, write: true, request: r.removeSmtpConfig, allowed: IAM_WRITE },

  { rpc: "gatehouse.admin.v1.EventService/ListEvents", write: false, request: r.listEvents, allowed: [...EVENTS_READ, OWN] },

  { rpc: "grpc.health.v1.Health/Check", write: false, request: r.healthCheck, allowed: [], isPublic: true },
  { rpc: "grpc.health.v1.Health/Watch", write: false, request: r.healthCheck, allowed: [], isPublic: true },
  { rpc: "grpc.health.v1.Health/List", write: false, request: r.healthList, allowed: [], isPublic: true },
  { rpc: "grpc.reflection.v1.ServerReflection/ServerReflectionInfo", write: false, request: r.reflection, allowed: [], isPublic: true },
  { rpc: "grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo", write: false, request: r.reflection, allowed: [], isPublic: true },
];

/** Request fields that name an object: a stranger must not learn whether it exists. */
const ID_FIELDS = new Set(["user_id", "project_id", "grant_id", "app_id", "idp_id", "organization_id", "granted_organization_id", "token_id"]);
/** Below this the matrix lost rows or columns without anyone deciding so. */
const CELL_FLOOR = 1200;

const t = useTestServer();
const methods = describedMethods();
let w: MatrixWorld;
let transports: TransportCache;
let cellsChecked = 0;
let existencePairs = 0;
const allMismatches: string[] = [];

beforeAll(async () => {
  w = await buildMatrixWorld(t.clients, t.server.adminToken);
  transports = new TransportCache(t.clients);
});

/**
 * Calls `row`'s RPC as `column`. The protocol rotates with `slot` (fixed by the row's and column's
 * places in the table, not by timing), so a failing cell fails again over the same protocol.
 */
async function callAs(row: Row, column: Column, slot: number, input: Record<string, unknown>, selfToken?: string): Promise<{ answer: Answer; protocol: string }> {
  const method = methods.get(row.rpc);
  if (!method) throw new Error(`${row.rpc} is not in the generated descriptors`);
  const protocol = protocolFor(method, TABLE.indexOf(row) + slot);
  cellsChecked++;
  const answer = await callRpc(method, transports.get(protocol, callOptions(w, column, w.orgA, selfToken)), input);
  return { answer, protocol };
}

describe("the table", () => {
  it("has a row for every RPC of the generated descriptors, and none for an RPC they do not describe", () => {
    expect([...new Set(TABLE.map((row) => row.rpc))].sort()).toEqual([...methods.keys()].sort());
  });

  it("never lets a viewer write", () => {
    const viewerWrites = TABLE.filter((row) => row.write).flatMap((row) => row.allowed.filter((c) => c.endsWith("_VIEWER")).map((c) => `${rowLabel(row)}: ${c}`));
    expect(viewerWrites).toEqual([]);
  });
});

describe.each(TABLE.map((row) => [rowLabel(row), row] as const))("%s", (_label, row) => {
  it("answers each caller as the contract says", async () => {
    const columns = COLUMNS.filter((column) => expectedOutcome(row, column) !== undefined);
    const mismatches = await inBatches(
      columns.map((column) => async () => {
        const expected = expectedOutcome(row, column)!;
        const { input, selfToken } = await row.request(w);
        const { answer, protocol } = await callAs(row, column, COLUMNS.indexOf(column), input, selfToken);
        return answerMatches(expected, answer) ? undefined : `${rowLabel(row)} as ${column} over ${protocol}: expected ${expected}, got ${describeAnswer(answer)}`;
      }),
      6,
    );
    const failed = mismatches.filter((m): m is string => m !== undefined);
    allMismatches.push(...failed);
    expect(failed).toEqual([]);
  });

  const idFields = methods.get(row.rpc)?.input.fields.filter((field) => ID_FIELDS.has(field.name)) ?? [];
  const strangers = STRANGERS.filter((column) => ["denied", "not_found"].includes(expectedOutcome(row, column) ?? ""));
  // Only rows that take an id and deny someone have an existence rule to check.
  if (idFields.length === 0 || strangers.length === 0) return;
  it("tells strangers nothing about whether an id exists", async () => {
    const differences = await inBatches(
      strangers.flatMap((column) =>
        idFields.map((field, fieldIndex) => async () => {
          const slot = STRANGERS.indexOf(column) + fieldIndex;
          const existing = await row.request(w);
          const unknown = await row.request(w);
          const known = String(unknown.input[field.localName]);
          const withUnknownId = { ...unknown.input, [field.localName]: unknownIdLike(known) };
          const [a, b] = [await callAs(row, column, slot, existing.input), await callAs(row, column, slot, withUnknownId)];
          existencePairs++;
          const same = a.answer.code === b.answer.code && a.answer.reason === b.answer.reason;
          return same ? undefined : `${rowLabel(row)} as ${column}, ${field.name}: existing → ${describeAnswer(a.answer)}, unknown → ${describeAnswer(b.answer)}`;
        }),
      ),
      6,
    );
    const failed = differences.filter((d): d is string => d !== undefined);
    allMismatches.push(...failed);
    expect(failed).toEqual([]);
  });
});

describe("nobody below IAM_OWNER gets a credential of the bootstrap admin", () => {
  it.each(PROTOCOLS)("the owner and the user manager of the admin's own organization are refused over %s", async (protocol) => {
    const asAdmin = t.clients.client(UserService, protocol, { token: t.server.adminToken });
    const before = (await asAdmin.listPersonalAccessTokens({ userId: w.adminId })).tokens.map((token) => token.tokenId);
    expect(before.length).toBeGreaterThan(0);
    for (const actor of [w.defaultOrgUserManager, w.defaultOrgOwner]) {
      const users = t.clients.client(UserService, protocol, { token: actor.token, orgId: w.defaultOrg });
      const privileged = { code: Code.PermissionDenied, reason: "principal.privileged" };
      expect(await failure(users.addPersonalAccessToken({ userId: w.adminId }))).toMatchObject(privileged);
      expect(await failure(users.listPersonalAccessTokens({ userId: w.adminId }))).toMatchObject(privileged);
      expect(await failure(users.removePersonalAccessToken({ userId: w.adminId, tokenId: before[0]! }))).toMatchObject(privileged);
      cellsChecked += 3;
    }
    expect((await asAdmin.listPersonalAccessTokens({ userId: w.adminId })).tokens.map((token) => token.tokenId)).toEqual(before);
  });
});

describe("the matrix size", () => {
  // Counted from the table, not from calls earlier tests happened to make: each row's own tests make
  // these calls, whatever order the tests run in (or when only some of them run).
  it(`defines at least ${CELL_FLOOR} caller checks`, () => {
    const callerCells = TABLE.reduce((sum, row) => sum + COLUMNS.filter((column) => expectedOutcome(row, column) !== undefined).length, 0);
    const existenceCalls = TABLE.reduce((sum, row) => {
      const idFields = methods.get(row.rpc)?.input.fields.filter((field) => ID_FIELDS.has(field.name)) ?? [];
      const strangers = STRANGERS.filter((column) => ["denied", "not_found"].includes(expectedOutcome(row, column) ?? ""));
      return sum + 2 * idFields.length * strangers.length;
    }, 0);
    const adminCredentialCalls = PROTOCOLS.length * 2 * 3;
    const planned = callerCells + existenceCalls + adminCredentialCalls;
    console.log(`authorization matrix: ${TABLE.length} rows over ${methods.size} RPCs, ${planned} calls defined; this run made ${cellsChecked} (${existencePairs} existing/unknown id pairs), ${allMismatches.length} mismatches`);
    expect(planned).toBeGreaterThan(CELL_FLOOR);
  });
});
