import { Code } from "@connectrpc/connect";
import { beforeAll, describe, expect, it } from "vitest";
import { EventService } from "../../gen/gatehouse/admin/v1/event_pb.js";
import { UserService } from "../../gen/gatehouse/admin/v1/user_pb.js";
import { failure } from "../support/errors.js";
import { useTestServer } from "../support/server.js";

/**
 * Binary protobuf carries any int64 seconds and int32 nanos in a Timestamp; values outside the
 * Timestamp's defined range are the client's error (invalid_argument naming the field), never
 * normalised into some other instant and never an internal error.
 */
const t = useTestServer();
let userId: string;

beforeAll(async () => {
  ({ userId } = await t.clients.client(UserService, "connect-json-http1", { token: t.server.adminToken }).createMachineUser({ userName: "clock-bot", name: "Clock bot" }));
});

const MAX_SECONDS = 253_402_300_799n; // 9999-12-31T23:59:59Z
const MIN_SECONDS = -62_135_596_800n; // 0001-01-01T00:00:00Z
const inFuture = BigInt(Math.floor(new Date("2030-01-01T00:00:00Z").getTime() / 1000));
const eventCount = async () => (await t.clients.client(EventService, "connect-json-http1", { token: t.server.adminToken }).listEvents({})).details!.totalResult;

describe.each(["connect-proto-h2c", "grpc-h2c"] as const)("AddPersonalAccessToken's expiration_date over %s", (protocol) => {
  const users = () => t.clients.client(UserService, protocol, { token: t.server.adminToken });

  it.each([
    ["seconds = 10¹⁵", { seconds: 10n ** 15n, nanos: 0 }],
    ["one second past the year 9999", { seconds: MAX_SECONDS + 1n, nanos: 0 }],
    ["one second before the year 1", { seconds: MIN_SECONDS - 1n, nanos: 0 }],
    ["the most negative int64", { seconds: -(2n ** 63n), nanos: 0 }],
    ["nanos = 10⁹", { seconds: inFuture, nanos: 1_000_000_000 }],
    ["negative nanos", { seconds: inFuture, nanos: -1 }],
  ])("refuses %s with invalid_argument on expiration_date and adds no token", async (_name, expirationDate) => {
    const before = await eventCount();
    const error = await failure(users().addPersonalAccessToken({ userId, expirationDate }));
    expect(error).toMatchObject({ code: Code.InvalidArgument, reason: "request.invalid", fields: ["expiration_date"], rules: ["timestamp.range"] });
    expect(await eventCount()).toBe(before);
  });

  it("accepts the last representable instant, 9999-12-31T23:59:59.999999999Z", async () => {
    const { token } = await users().addPersonalAccessToken({ userId, expirationDate: { seconds: MAX_SECONDS, nanos: 999_999_999 } });
    expect(token).not.toBe("");
  });
});
