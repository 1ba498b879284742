import { create, fromJsonString, type MessageInitShape, toJsonString } from "@bufbuild/protobuf";
import { type Client, createClient, type Interceptor } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { ApplicationService } from "../../gen/gatehouse/admin/v1/application_pb.js";
import { EventService } from "../../gen/gatehouse/admin/v1/event_pb.js";
import { OrganizationService } from "../../gen/gatehouse/admin/v1/organization_pb.js";
import { ProjectService } from "../../gen/gatehouse/admin/v1/project_pb.js";
import { type CreateHumanUserRequestSchema, ImportOutcome, ResendEmailCodeRequestSchema, ResendEmailCodeResponseSchema, UserService } from "../../gen/gatehouse/admin/v1/user_pb.js";
import { postAll } from "./http1-calls.js";

/**
 * What the scenarios need, made through Gatehouse's own API with the bootstrap admin's token
 * (IAM_OWNER and ORG_OWNER of the first organization), Connect JSON over HTTP/1.1, several calls at
 * once; users a thousand at a time with ImportHumanUsersBatch (one call per user took most of the
 * quick run's preparation, half a minute of it on PostgreSQL). Names carry a per-bench prefix so
 * nothing collides with what another run of the same data dir made.
 */
export interface World {
  token: string;
  /** A project of the admin's organization: the authenticated read (GetProject). */
  readProjectId: string;
  /** The organization project grants go to; its users become grant members. */
  partnerOrgId: string;
  /** A fresh application to rename (UpdateApplication, the mixed run's writes). */
  newApplication(): Promise<{ projectId: string; appId: string }>;
  /** A fresh project with a role, granted to the partner organization: every (grant, user) pair is new. */
  newGrant(): Promise<{ projectId: string; grantId: string }>;
  /** At least `count` users of the partner organization (made once, grown when asked for more). */
  partnerUsers(count: number): Promise<string[]>;
  /** `count` new human users with an unverified email and their pending email code. */
  unverifiedUsers(count: number): Promise<{ userId: string; code: string }[]>;
  /**
   * At least `count` events in the log (new projects, one `project.added` each, while it has fewer): a page of
   * ListEvents must be as long on a fresh server as on a seeded one.
   */
  ensureEvents(count: number): Promise<void>;
  /** At least `count` users in the admin's organization (new human users while it has fewer): a full ListUsers page. */
  ensureOrgUsers(count: number): Promise<void>;
}

/** Runs `task(0..count-1)` with at most `concurrency` at once; results in index order. */
export async function inParallel<T>(count: number, concurrency: number, task: (index: number) => Promise<T>): Promise<T[]> {
  const results = new Array<T>(count);
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const index = next++;
      results[index] = await task(index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
  return results;
}

const SETUP_CONCURRENCY = 16;
/** ImportHumanUsersBatch's most users per call (user.proto). */
const IMPORT_BATCH = 1000;

type UserInput = MessageInitShape<typeof CreateHumanUserRequestSchema>;

/** Creates the users (no mails, no codes: the import's default) and answers their ids, in order. */
async function importUsers(users: Client<typeof UserService>, inputs: UserInput[]): Promise<string[]> {
  const batches = Array.from({ length: Math.ceil(inputs.length / IMPORT_BATCH) }, (_, i) => inputs.slice(i * IMPORT_BATCH, (i + 1) * IMPORT_BATCH));
  const answers = await inParallel(batches.length, 2, (i) => users.importHumanUsersBatch({ users: batches[i]!.map((user) => ({ user })) }));
  return answers.flatMap(({ results }) =>
    results.map((result) => {
      if (result.outcome !== ImportOutcome.CREATED) throw new Error(`the bench's set-up could not import a user: ${result.error?.message ?? ImportOutcome[result.outcome]}`);
      return result.userId;
    }),
  );
}

export async function createWorld(baseUrl: string, token: string): Promise<World> {
  const clientsFor = (orgId?: string) => {
    const headers: Interceptor = (next) => (req) => {
      req.header.set("authorization", `Bearer ${token}`);
      if (orgId) req.header.set("x-service-orgid", orgId);
      return next(req);
    };
    const transport = createConnectTransport({ baseUrl, httpVersion: "1.1", useBinaryFormat: false, interceptors: [headers] });
    return {
      projects: createClient(ProjectService, transport),
      apps: createClient(ApplicationService, transport),
      orgs: createClient(OrganizationService, transport),
      users: createClient(UserService, transport),
      events: createClient(EventService, transport),
    };
  };
  const admin = clientsFor();
  const run = `b${Date.now().toString(36)}`;
  let serial = 0;
  const name = (kind: string) => `${run}-${kind}-${serial++}`;

  const { projectId: readProjectId } = await admin.projects.createProject({ name: name("read-project") });
  const { organizationId: partnerOrgId } = await admin.orgs.createOrganization({ name: name("partner") });
  const partner: { users: Client<typeof UserService> } = clientsFor(partnerOrgId);
  const pool: string[] = [];

  return {
    token,
    readProjectId,
    partnerOrgId,
    async newApplication() {
      const { projectId } = await admin.projects.createProject({ name: name("app-project") });
      const { appId } = await admin.apps.createOidcApplication({ projectId, name: name("app"), redirectUris: ["https://bench.example.com/callback"] });
      return { projectId, appId };
    },
    async newGrant() {
      const { projectId } = await admin.projects.createProject({ name: name("grant-project") });
      await admin.projects.addProjectRole({ projectId, roleKey: "viewer", displayName: "Viewer" });
      const { grantId } = await admin.projects.createProjectGrant({ projectId, grantedOrganizationId: partnerOrgId, roleKeys: ["viewer"] });
      return { projectId, grantId };
    },
    async partnerUsers(count) {
      const missing = count - pool.length;
      if (missing > 0) {
        pool.push(
          ...(await importUsers(
            partner.users,
            Array.from({ length: missing }, () => {
              const userName = name("member");
              return { userName, profile: { firstName: "Bench", lastName: "Member" }, email: { email: `${userName}@bench.example.com`, isEmailVerified: true } };
            }),
          )),
        );
      }
      return pool.slice(0, count);
    },
    async ensureEvents(count) {
      const { details } = await admin.events.listEvents({ pageSize: 1 });
      const missing = count - Number(details?.totalResult ?? 0n);
      if (missing > 0) await inParallel(missing, SETUP_CONCURRENCY, () => admin.projects.createProject({ name: name("event") }));
    },
    async ensureOrgUsers(count) {
      const { details } = await admin.users.listUsers({ pageSize: 1 });
      const missing = count - Number(details?.totalResult ?? 0n);
      if (missing > 0) {
        await importUsers(
          admin.users,
          Array.from({ length: missing }, () => {
            const userName = name("listed");
            return { userName, profile: { firstName: "Bench", lastName: "Listed" }, email: { email: `${userName}@bench.example.com`, isEmailVerified: true } };
          }),
        );
      }
    },
    async unverifiedUsers(count) {
      const userIds = await importUsers(
        admin.users,
        Array.from({ length: count }, () => {
          const userName = name("verify");
          return { userName, profile: { firstName: "Bench", lastName: "Verify" }, email: { email: `${userName}@bench.example.com` } };
        }),
      );
      // An import issues no code without its mail: the code a user would find in the mail, returned to the admin
      // instead (README, "Human users"). One call a user, so through the bench's lean client (http1-calls.ts).
      const path = `/${UserService.typeName}/${UserService.method.resendEmailCode.name}`;
      const calls = userIds.map((userId) => ({ path, body: toJsonString(ResendEmailCodeRequestSchema, create(ResendEmailCodeRequestSchema, { userId, returnCode: true })) }));
      const answers = await postAll(baseUrl, { authorization: `Bearer ${token}`, "content-type": "application/json" }, calls, SETUP_CONCURRENCY);
      return answers.map(({ status, body }, i) => {
        const { verificationCode } = status === 200 ? fromJsonString(ResendEmailCodeResponseSchema, body) : { verificationCode: undefined };
        if (!verificationCode) throw new Error(`ResendEmailCode returned no code (HTTP ${status}): ${body.slice(0, 200)}`);
        return { userId: userIds[i]!, code: verificationCode };
      });
    },
  };
}
