import { Code } from "@connectrpc/connect";
import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import { beforeAll, describe, expect, it } from "vitest";
import { EventService } from "../../gen/gatehouse/admin/v1/event_pb.js";
import { UserService } from "../../gen/gatehouse/admin/v1/user_pb.js";
import { PROTOCOLS } from "../support/clients.js";
import { failure } from "../support/errors.js";
import { useTestServer } from "../support/server.js";
import { type Actor, createActor } from "../support/world.js";

/** Token lifecycle (issue 9): tokens can be listed (never the secret) and revoked, effective at once. */
const t = useTestServer();
let defaultOrg: string;
let n = 0;

const admin = () => t.clients.client(UserService, "connect-json-http1", { token: t.server.adminToken });
const newActor = (roles: string[] = []) => createActor(t.clients, t.server.adminToken, defaultOrg, `pat-${++n}`, roles);

beforeAll(async () => {
  defaultOrg = (await admin().listUsers({ userName: "admin" })).users[0]!.details!.resourceOwner;
});

describe.each(PROTOCOLS)("personal access tokens over %s", (protocol) => {
  it("lists ids and dates, oldest first, never the token or its hash", async () => {
    const actor = await newActor();
    const expires = new Date(t.server.clock.now().getTime() + 86_400_000);
    const second = await admin().addPersonalAccessToken({ userId: actor.userId, expirationDate: timestampFromDate(expires) });
    const { details, tokens } = await t.clients.client(UserService, protocol, { token: t.server.adminToken }).listPersonalAccessTokens({ userId: actor.userId });
    expect(details?.totalResult).toBe(2n);
    expect(tokens.map((token) => token.tokenId)).toEqual([actor.token.split(".")[1], second.tokenId]);
    expect(tokens[0]?.expirationDate).toBeUndefined();
    expect(timestampDate(tokens[1]!.expirationDate!)).toEqual(expires);
    expect(timestampDate(tokens[1]!.creationDate!)).toEqual(t.server.clock.now());
    const secret = second.token.split(".")[2]!;
    expect(JSON.stringify(tokens, (_key, value: unknown) => (typeof value === "bigint" ? String(value) : value))).not.toContain(secret);
  });

  it("a removed token is refused on the very next call, on every protocol; the user's other tokens keep working", async () => {
    const actor = await newActor();
    const other = await admin().addPersonalAccessToken({ userId: actor.userId });
    const tokenId = actor.token.split(".")[1]!;
    const self = { userId: actor.userId };
    await t.clients.client(UserService, protocol, { token: actor.token }).listPersonalAccessTokens(self);
    const { details } = await t.clients.client(UserService, protocol, { token: t.server.adminToken }).removePersonalAccessToken({ userId: actor.userId, tokenId });
    expect(details?.resourceOwner).toBe(defaultOrg);
    for (const each of PROTOCOLS) {
      expect(await failure(t.clients.client(UserService, each, { token: actor.token }).listPersonalAccessTokens(self))).toMatchObject({ code: Code.Unauthenticated });
    }
    await t.clients.client(UserService, protocol, { token: other.token }).listPersonalAccessTokens({ userId: actor.userId });
  });

  it("a user without any role lists and removes its own tokens, but nobody else's", async () => {
    const actor = await newActor();
    const neighbour = await newActor();
    const own = t.clients.client(UserService, protocol, { token: actor.token });
    const { tokens } = await own.listPersonalAccessTokens({ userId: actor.userId });
    expect(tokens).toHaveLength(1);
    expect(await failure(own.listPersonalAccessTokens({ userId: neighbour.userId }))).toMatchObject({ code: Code.PermissionDenied });
    const neighbourToken = neighbour.token.split(".")[1]!;
    expect(await failure(own.removePersonalAccessToken({ userId: neighbour.userId, tokenId: neighbourToken }))).toMatchObject({ code: Code.PermissionDenied });
    await own.removePersonalAccessToken({ userId: actor.userId, tokenId: tokens[0]!.tokenId });
    expect(await failure(own.listPersonalAccessTokens({ userId: actor.userId }))).toMatchObject({ code: Code.Unauthenticated });
  });
});

describe("listing many tokens", () => {
  it("pages in creation order with opaque tokens and the total; a forged page token is invalid_argument", async () => {
    const actor = await newActor();
    const issued = [actor.token.split(".")[1]!];
    for (let i = 0; i < 4; i++) issued.push((await admin().addPersonalAccessToken({ userId: actor.userId })).tokenId);
    const seen: string[] = [];
    let pageToken = "";
    let pages = 0;
    do {
      const page = await admin().listPersonalAccessTokens({ userId: actor.userId, pageSize: 2, pageToken });
      expect(page.details?.totalResult).toBe(5n);
      seen.push(...page.tokens.map((token) => token.tokenId));
      pageToken = page.details?.nextPageToken ?? "";
      pages++;
    } while (pageToken);
    expect([seen, pages]).toEqual([issued, 3]);
    expect(await failure(admin().listPersonalAccessTokens({ userId: actor.userId, pageToken: "bm9wZQ" }))).toMatchObject({ code: Code.InvalidArgument, reason: "page_token.invalid" });
  });
});

describe("removing a token", () => {
  let actor: Actor;
  beforeAll(async () => {
    actor = await newActor();
  });

  it("is not_found for another user's token, an unknown token and a token removed already", async () => {
    const other = await newActor();
    const otherTokenId = other.token.split(".")[1]!;
    const users = admin();
    expect(await failure(users.removePersonalAccessToken({ userId: actor.userId, tokenId: otherTokenId }))).toMatchObject({ code: Code.NotFound, reason: "token.not_found" });
    expect(await failure(users.removePersonalAccessToken({ userId: actor.userId, tokenId: "no-such-token" }))).toMatchObject({ code: Code.NotFound, reason: "token.not_found" });
    // The other user's token was not touched.
    await t.clients.client(UserService, "connect-json-http1", { token: other.token }).listPersonalAccessTokens({ userId: other.userId });
    const tokenId = actor.token.split(".")[1]!;
    await users.removePersonalAccessToken({ userId: actor.userId, tokenId });
    expect(await failure(users.removePersonalAccessToken({ userId: actor.userId, tokenId }))).toMatchObject({ code: Code.NotFound, reason: "token.not_found" });
  });

  it("records user.pat.added and user.pat.removed events naming the token, never its secret", async () => {
    const issued = await admin().addPersonalAccessToken({ userId: actor.userId });
    await admin().removePersonalAccessToken({ userId: actor.userId, tokenId: issued.tokenId });
    const { events } = await t.clients.client(EventService, "connect-json-http1", { token: t.server.adminToken }).listEvents({ aggregateId: actor.userId });
    const patEvents = events.filter((event) => event.eventType.startsWith("user.pat."));
    expect(patEvents.slice(-2).map((event) => [event.eventType, (event.payload as { tokenId?: string } | undefined)?.tokenId])).toEqual([
      ["user.pat.added", issued.tokenId],
      ["user.pat.removed", issued.tokenId],
    ]);
    expect(JSON.stringify(events, (_key, value: unknown) => (typeof value === "bigint" ? String(value) : value))).not.toContain(issued.token.split(".")[2]!);
  });
});
