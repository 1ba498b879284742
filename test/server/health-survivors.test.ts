import { create } from "@bufbuild/protobuf";
import { createHandlerContext } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { Health, HealthCheckRequestSchema, HealthCheckResponse_ServingStatus as ServingStatus } from "../../gen/grpc/health/v1/health_pb.js";
import { createHealthService, createHealthState } from "../../src/api/health/health-service.js";
import { SERVED_SERVICES } from "../../src/routes.js";
import { useTestServer } from "../support/server.js";

// grpc.health.v1 (proto/vendor/grpc/health/v1/health.proto and grpc's health-checking.md): "" is the server,
// every served service has a status, Watch sends the current status at once and then every change.

const t = useTestServer();

describe("grpc.health.v1.Health/List", () => {
  it("lists the server (\"\") and every served service, each SERVING", async () => {
    const { statuses } = await t.clients.client(Health, "grpc-h2c").list({});
    const expected = ["", ...SERVED_SERVICES.map((service) => service.typeName)];
    expect(Object.keys(statuses).sort()).toEqual([...expected].sort());
    for (const name of expected) expect(statuses[name]?.status, name).toBe(ServingStatus.SERVING);
  });
});

describe("grpc.health.v1.Health/Watch, in process", () => {
  const names = ["gatehouse.admin.v1.UserService"];
  function watch(state = createHealthState(), service = "") {
    const context = createHandlerContext({
      service: Health,
      method: Health.method.watch,
      protocolName: "grpc",
      requestMethod: "POST",
      url: "http://127.0.0.1/grpc.health.v1.Health/Watch",
    });
    const stream = createHealthService(state, names).watch!(create(HealthCheckRequestSchema, { service }), context)[Symbol.asyncIterator]();
    return { state, context, stream };
  }

  it("a watch that starts once the server is NOT_SERVING (a stop has begun) says so and ends, so the stop is not held up", async () => {
    const state = createHealthState();
    state.setServing(false);
    const { stream } = watch(state);
    expect(await stream.next()).toEqual({ done: false, value: { status: ServingStatus.NOT_SERVING } });
    const next = stream.next();
    // Any later change must not reach a stream that has ended.
    state.setServing(false);
    expect(await next).toEqual({ done: true, value: undefined });
  });

  it("sends the current status first, then each change, staying open while SERVING, and ends after NOT_SERVING", async () => {
    const { state, stream } = watch(createHealthState(), "gatehouse.admin.v1.UserService");
    expect(await stream.next()).toEqual({ done: false, value: { status: ServingStatus.SERVING } });
    const serving = stream.next();
    state.setServing(true);
    expect(await serving).toEqual({ done: false, value: { status: ServingStatus.SERVING } });
    const notServing = stream.next();
    state.setServing(false);
    expect(await notServing).toEqual({ done: false, value: { status: ServingStatus.NOT_SERVING } });
    expect(await stream.next()).toEqual({ done: true, value: undefined });
  });

  it("a watch of an unknown service says SERVICE_UNKNOWN and stays open", async () => {
    const { state, context, stream } = watch(createHealthState(), "nope.Service");
    expect(await stream.next()).toEqual({ done: false, value: { status: ServingStatus.SERVICE_UNKNOWN } });
    const change = stream.next();
    state.setServing(true);
    expect(await change).toEqual({ done: false, value: { status: ServingStatus.SERVICE_UNKNOWN } });
    context.abort();
  });

  it("a cancelled watch ends at once and hears no later change", async () => {
    const { state, context, stream } = watch();
    expect(await stream.next()).toEqual({ done: false, value: { status: ServingStatus.SERVING } });
    const next = stream.next();
    context.abort();
    state.setServing(false);
    expect(await next).toEqual({ done: true, value: undefined });
  });
});
