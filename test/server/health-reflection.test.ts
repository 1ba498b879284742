import { fromBinary } from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";
import { Code } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { Health, HealthCheckResponse_ServingStatus } from "../../gen/grpc/health/v1/health_pb.js";
import { ServerReflection as ReflectionV1 } from "../../gen/grpc/reflection/v1/reflection_pb.js";
import { ServerReflection as ReflectionV1alpha } from "../../gen/grpc/reflection/v1alpha/reflection_pb.js";
import { Clients } from "../support/clients.js";
import { failure } from "../support/errors.js";
import { eventually } from "../support/eventually.js";
import { startTestServer, useTestServer } from "../support/server.js";

const t = useTestServer();

describe("grpc.health.v1.Health (no token needed)", () => {
  it("reports SERVING for the server and each service, NOT_FOUND for unknown services", async () => {
    const health = t.clients.client(Health, "grpc-h2c");
    expect((await health.check({ service: "" })).status).toBe(HealthCheckResponse_ServingStatus.SERVING);
    expect((await health.check({ service: "gatehouse.admin.v1.UserService" })).status).toBe(HealthCheckResponse_ServingStatus.SERVING);
    expect((await failure(health.check({ service: "nope.Service" }))).code).toBe(Code.NotFound);
  });

  it("streams the status to watchers", async () => {
    const health = t.clients.client(Health, "grpc-h2c");
    const controller = new AbortController();
    const stream = health.watch({ service: "" }, { signal: controller.signal })[Symbol.asyncIterator]();
    const first = await stream.next();
    controller.abort();
    expect(first.done).toBe(false);
    expect(first.value?.status).toBe(HealthCheckResponse_ServingStatus.SERVING);
  });
});

describe.each([
  ["v1", ReflectionV1],
  ["v1alpha", ReflectionV1alpha],
] as const)("gRPC server reflection %s (no token needed)", (_version, service) => {
  async function ask(request: Record<string, unknown>) {
    const reflection = t.clients.client(service as typeof ReflectionV1, "grpc-h2c");
    async function* requests() {
      yield { host: "", messageRequest: request } as never;
    }
    for await (const response of reflection.serverReflectionInfo(requests())) return response;
    throw new Error("no response");
  }

  it("lists every service", async () => {
    const response = await ask({ case: "listServices", value: "" });
    expect(response.messageResponse.case).toBe("listServicesResponse");
    const names = response.messageResponse.case === "listServicesResponse" ? response.messageResponse.value.service.map((s) => s.name) : [];
    expect(names).toEqual(expect.arrayContaining(["gatehouse.admin.v1.UserService", "gatehouse.admin.v1.SmtpService", "grpc.health.v1.Health"]));
  });

  it("returns the file of a symbol with its dependencies", async () => {
    const response = await ask({ case: "fileContainingSymbol", value: "gatehouse.admin.v1.UserService.CreateHumanUser" });
    expect(response.messageResponse.case).toBe("fileDescriptorResponse");
    const files =
      response.messageResponse.case === "fileDescriptorResponse"
        ? response.messageResponse.value.fileDescriptorProto.map((bytes) => fromBinary(FileDescriptorProtoSchema, bytes).name)
        : [];
    expect(files[0]).toBe("gatehouse/admin/v1/user.proto");
    expect(files).toEqual(expect.arrayContaining(["gatehouse/admin/v1/details.proto", "buf/validate/validate.proto", "google/api/annotations.proto", "google/protobuf/timestamp.proto"]));
  });

  it("answers NOT_FOUND in-band for an unknown symbol", async () => {
    const response = await ask({ case: "fileContainingSymbol", value: "no.such.Thing" });
    expect(response.messageResponse.case).toBe("errorResponse");
    expect(response.messageResponse.case === "errorResponse" && response.messageResponse.value.errorCode).toBe(Code.NotFound);
  });
});

describe("health during a graceful stop", () => {
  it("tells watchers NOT_SERVING, ends their streams, and does not hold up the stop", async () => {
    const server = await startTestServer({ config: { shutdownTimeoutMs: 10_000 } });
    const clients = new Clients(server.url);
    const statuses: HealthCheckResponse_ServingStatus[] = [];
    const watching = (async () => {
      for await (const update of clients.client(Health, "grpc-h2c").watch({ service: "" })) statuses.push(update.status);
    })();
    await eventually(() => statuses.length > 0, { what: "the watcher's first status" });
    expect(statuses).toEqual([HealthCheckResponse_ServingStatus.SERVING]);
    const started = Date.now();
    await server.dispose();
    await watching;
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(statuses).toEqual([HealthCheckResponse_ServingStatus.SERVING, HealthCheckResponse_ServingStatus.NOT_SERVING]);
    clients.close();
  });
});
