import { create, type DescMessage, type DescMethodUnary, type MessageInitShape, type MessageShape } from "@bufbuild/protobuf";
import { ApplicationService } from "../../gen/gatehouse/admin/v1/application_pb.js";
import { EventService } from "../../gen/gatehouse/admin/v1/event_pb.js";
import { ProjectService } from "../../gen/gatehouse/admin/v1/project_pb.js";
import { UserService } from "../../gen/gatehouse/admin/v1/user_pb.js";
import { Health } from "../../gen/grpc/health/v1/health_pb.js";
import { WRK_BLOCK } from "./encode.js";
import type { World } from "./setup.js";

/** One request of a run: where it goes, its message, and whether a success is the right answer. */
export interface BenchRequest {
  path: string;
  schema: DescMessage;
  message: MessageShape<DescMessage>;
  ok: boolean;
}

function request<I extends DescMessage>(method: DescMethodUnary<I>, init: MessageInitShape<I>, ok = true): BenchRequest {
  return { path: `/${method.parent.typeName}/${method.name}`, schema: method.input, message: create(method.input, init), ok };
}

export interface Scenario {
  id: string;
  title: string;
  kind: "noop" | "read" | "write" | "mixed";
  /** A durable write: the ≥ 60 % of the no-op target, and the p99 check at half of saturation. */
  durableWrite?: boolean;
  /** Every request is alike: the sequence may repeat (reads). Otherwise a repeat is a bench error. */
  repeats?: boolean;
  /** Each request needs data made beforehand through the API (users, codes): sized from the write rate. */
  pooled?: boolean;
  /** Not in a plain run unless named (`--scenarios`): its cost is the data's size, which only `--scale` varies. */
  scaleOnly?: boolean;
  /** `count` requests, in the order they are to be sent (a run takes them in order). */
  requests(world: World, count: number): Promise<BenchRequest[]>;
}

/** The imported hash of the README's example: stored as given, so its bcrypt cost does not matter. */
const BCRYPT_HASH = "$2b$10$N9qo8uLOickgx2ZMRZoMyeIjZAgcfl7p92ldGxad68LJZdL17lhWy";
export const PLAIN_PASSWORD = "Bench-Password-1!";
/** ListEvents' and ListUsers' page sizes. */
const LIST_EVENTS_PAGE = 100;
const LIST_USERS_PAGE = 100;

/**
 * Wrong codes and right codes go in blocks of this many users, all wrong ones then all right ones:
 * one block of wrk's, so one thread sends both codes of a user, the right one 64 requests later.
 */
const VERIFY_BLOCK_USERS = WRK_BLOCK / 2;

const tag = () => Math.random().toString(36).slice(2, 8);
const times = <T>(count: number, make: (index: number) => T) => Array.from({ length: count }, (_, index) => make(index));

function newHumanUser(prefix: string, index: number, password: { password: string } | { hashedPassword: { value: string } }) {
  const userName = `${prefix}-${index}`;
  return request(UserService.method.createHumanUser, {
    userName,
    profile: { firstName: "Bench", lastName: `User ${index}` },
    email: { email: `${userName}@bench.example.com`, isEmailVerified: true },
    ...password,
  });
}

export const HEALTH: Scenario = {
  id: "health",
  title: "Health/Check",
  kind: "noop",
  repeats: true,
  requests: async (_world, count) => times(count, () => request(Health.method.check, {})),
};

export const SCENARIOS: Scenario[] = [
  HEALTH,
  {
    id: "get-project",
    title: "GetProject",
    kind: "read",
    repeats: true,
    requests: async (world, count) => times(count, () => request(ProjectService.method.getProject, { projectId: world.readProjectId })),
  },
  {
    id: "list-events",
    title: "ListEvents (100)",
    kind: "read",
    repeats: true,
    async requests(world, count) {
      // A full page and a next one on every server: a fresh log holds only the set-up's few events, and a page of
      // 20 against a seeded log's 100 would compare different work.
      await world.ensureEvents(LIST_EVENTS_PAGE * 2);
      return times(count, () => request(EventService.method.listEvents, { pageSize: LIST_EVENTS_PAGE }));
    },
  },
  {
    id: "list-users",
    title: "ListUsers (100)",
    kind: "read",
    repeats: true,
    scaleOnly: true,
    async requests(world, count) {
      // The first page of the admin's organization: full, with a next one, on a fresh server too (200 users); a
      // seeded one holds N / organizations (1 000) of them.
      await world.ensureOrgUsers(LIST_USERS_PAGE * 2);
      return times(count, () => request(UserService.method.listUsers, { pageSize: LIST_USERS_PAGE }));
    },
  },
  {
    id: "update-application",
    title: "UpdateApplication",
    kind: "write",
    durableWrite: true,
    async requests(world, count) {
      const { projectId, appId } = await world.newApplication();
      const prefix = `app-${tag()}`;
      return times(count, (i) => request(ApplicationService.method.updateApplication, { projectId, appId, name: `${prefix}-${i}` }));
    },
  },
  {
    id: "add-grant-member",
    title: "AddProjectGrantMember",
    kind: "write",
    durableWrite: true,
    pooled: true,
    async requests(world, count) {
      // A new grant per run and the same pool of users: every (grant, user) pair is new.
      const { projectId, grantId } = await world.newGrant();
      const users = await world.partnerUsers(count);
      return users.map((userId) => request(ProjectService.method.addProjectGrantMember, { projectId, grantId, userId, roles: ["PROJECT_GRANT_OWNER"] }));
    },
  },
  {
    id: "verify-email",
    title: "VerifyEmail (wrong, right)",
    kind: "write",
    durableWrite: true,
    pooled: true,
    async requests(world, count) {
      const users = await world.unverifiedUsers(Math.ceil(count / 2));
      // A wrong code of the same shape: the right one rotated by one character (another user's if
      // that changes nothing); it fails as invalid_argument and uses up one attempt.
      const wrongCode = (i: number) => {
        const code = users[i]!.code;
        const rotated = code.slice(1) + code.slice(0, 1);
        return rotated.toUpperCase() !== code.toUpperCase() ? rotated : users[(i + 1) % users.length]!.code;
      };
      const out: BenchRequest[] = [];
      for (let start = 0; start < users.length; start += VERIFY_BLOCK_USERS) {
        const block = users.slice(start, start + VERIFY_BLOCK_USERS);
        block.forEach(({ userId }, j) => out.push(request(UserService.method.verifyEmail, { userId, verificationCode: wrongCode(start + j) }, false)));
        block.forEach(({ userId, code }) => out.push(request(UserService.method.verifyEmail, { userId, verificationCode: code })));
      }
      return out.slice(0, count);
    },
  },
  {
    id: "create-user-imported",
    title: "CreateHumanUser (bcrypt import)",
    kind: "write",
    durableWrite: true,
    async requests(_world, count) {
      const prefix = `imp-${tag()}`;
      return times(count, (i) => newHumanUser(prefix, i, { hashedPassword: { value: BCRYPT_HASH } }));
    },
  },
  {
    id: "create-user-password",
    title: "CreateHumanUser (argon2id)",
    kind: "write",
    async requests(_world, count) {
      const prefix = `pwd-${tag()}`;
      return times(count, (i) => newHumanUser(prefix, i, { password: PLAIN_PASSWORD }));
    },
  },
  {
    id: "mixed",
    title: "Mixed 90 % GetProject / 10 % UpdateApplication",
    kind: "mixed",
    async requests(world, count) {
      const { projectId, appId } = await world.newApplication();
      const prefix = `mix-${tag()}`;
      return times(count, (i) =>
        i % 10 === 9
          ? request(ApplicationService.method.updateApplication, { projectId, appId, name: `${prefix}-${i}` })
          : request(ProjectService.method.getProject, { projectId: world.readProjectId }),
      );
    },
  },
];
