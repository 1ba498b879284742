import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient, createContextValues, createRouterTransport } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { OrganizationService } from "../../gen/gatehouse/admin/v1/organization_pb.js";
import { BadRequestSchema, ErrorInfoSchema } from "../../gen/google/rpc/error_details_pb.js";
import { Health, HealthCheckResponse_ServingStatus, HealthCheckResponseSchema } from "../../gen/grpc/health/v1/health_pb.js";
import { alreadyExists, invalidArgument } from "../../src/domain/errors.js";
import { createErrorMappingInterceptor } from "../../src/interceptors/error-mapping.js";
import { createObserveInterceptor } from "../../src/interceptors/observe.js";
import { requestIdKey } from "../../src/interceptors/context-keys.js";
import { createLogger } from "../../src/support/logger.js";
import { createMetrics } from "../../src/support/metrics.js";
import { errorShape } from "../support/errors.js";
import { LogCapture } from "../support/server.js";

/** An in-memory router (unit test of interceptors only) whose handler throws `error`. */
function clientThrowing(error: unknown, logs: LogCapture) {
  const logger = createLogger("info", logs);
  const transport = createRouterTransport(
    (router) => router.service(OrganizationService, { createOrganization: () => Promise.reject(error) }),
    {
      router: {
        interceptors: [
          (next) => (req) => {
            req.contextValues.set(requestIdKey, "req-123");
            return next(req);
          },
          createObserveInterceptor(logger, createMetrics()),
          createErrorMappingInterceptor(logger),
        ],
      },
    },
  );
  return createClient(OrganizationService, transport);
}

/** The ConnectError the client sees when the handler throws `error`. */
async function wireErrorOf(error: unknown): Promise<ConnectError> {
  return clientThrowing(error, new LogCapture())
    .createOrganization({ name: "x" })
    .then(
      () => expect.fail("the call succeeded"),
      (thrown: unknown) => ConnectError.from(thrown),
    );
}

async function shapeOf(error: unknown, logs = new LogCapture()) {
  try {
    await clientThrowing(error, logs).createOrganization({ name: "x" });
  } catch (thrown) {
    return { shape: errorShape(thrown), message: ConnectError.from(thrown).rawMessage, logs };
  }
  throw new Error("no error");
}

describe("error mapping", () => {
  it("answers connect's 'parse binary' internal error as the caller's malformed request, and only that one", async () => {
    const malformed = await shapeOf(new ConnectError("parse binary: premature EOF", Code.Internal));
    expect(malformed.shape).toMatchObject({ code: Code.InvalidArgument, reason: "request.malformed" });
    expect(malformed.message).toBe("undecodable protobuf request: premature EOF");
    // What the reader said is echoed cut short.
    expect((await shapeOf(new ConnectError(`parse binary: ${"x".repeat(400)}`, Code.Internal))).message).toBe(`undecodable protobuf request: ${"x".repeat(300)}`);
    // Another internal error is a fault of the server, whatever its text; a parse message under another code keeps it.
    const fault = await shapeOf(new ConnectError("the disk said no", Code.Internal));
    expect(fault.shape).toMatchObject({ code: Code.Internal, reason: "internal" });
    expect(fault.logs.parsed().some((line) => line.msg === "internal error")).toBe(true);
    expect((await shapeOf(new ConnectError("parse binary: but unavailable", Code.Unavailable))).shape).toMatchObject({ code: Code.Unavailable, reason: "rpc.unavailable" });
    // A plain error whose text looks like connect's is a bug like any other.
    expect((await shapeOf(Object.assign(new Error("parse binary: x"), { code: Code.Internal, rawMessage: "parse binary: x" }))).shape).toMatchObject({ code: Code.Internal, reason: "internal" });
  });

  it("turns a domain error into its code with ErrorInfo (reason, domain, metadata)", async () => {
    const { shape } = await shapeOf(alreadyExists("organization.already_exists", "taken", { name: "x" }));
    expect(shape).toMatchObject({ code: Code.AlreadyExists, reason: "organization.already_exists", domain: "gatehouse", metadata: { name: "x" } });
  });

  it("adds BadRequest with one field violation per broken rule", async () => {
    const { shape } = await shapeOf(
      invalidArgument("request.invalid", "bad", [
        { field: "profile.first_name", description: "too long", rule: "string.max_len" },
        { field: "email.email", description: "empty", rule: "string.min_len" },
      ]),
    );
    expect(shape).toMatchObject({ code: Code.InvalidArgument, fields: ["profile.first_name", "email.email"], rules: ["string.max_len", "string.min_len"] });
  });

  it("hides an unexpected error behind `internal` and the request id, and logs its cause under that id", async () => {
    const { shape, message, logs } = await shapeOf(new Error("database file is corrupt at /secret/path"));
    expect(shape).toMatchObject({ code: Code.Internal, reason: "internal", metadata: { requestId: "req-123" } });
    expect(message).toBe("internal error (request id req-123)");
    expect(message).not.toContain("corrupt");
    const entry = logs.parsed().find((line) => line.msg === "internal error");
    expect(entry).toMatchObject({ requestId: "req-123", err: { message: "database file is corrupt at /secret/path" } });
  });

  it("adds no BadRequest to an error without field violations, and a violation without a rule id has an empty reason", async () => {
    const plain = await shapeOf(alreadyExists("organization.already_exists", "taken"));
    expect(plain.shape.fields).toEqual([]);
    expect((await wireErrorOf(alreadyExists("organization.already_exists", "taken"))).findDetails(BadRequestSchema)).toEqual([]);
    const unnamed = await shapeOf(invalidArgument("request.invalid", "bad", [{ field: "name", description: "not a name" }]));
    expect(unnamed.shape).toMatchObject({ fields: ["name"], rules: [""] });
  });

  it.each([
    ["internal", Code.Internal],
    ["unknown", Code.Unknown],
  ] as const)("treats a ConnectError with code %s like any unexpected error: internal with the request id, cause only in the log", async (_name, code) => {
    const { shape, message, logs } = await shapeOf(new ConnectError("sqlite said: /secret/path", code));
    expect(shape).toMatchObject({ code: Code.Internal, reason: "internal", metadata: { requestId: "req-123" } });
    expect(message).toBe("internal error (request id req-123)");
    expect(logs.parsed().find((line) => line.msg === "internal error")).toMatchObject({ requestId: "req-123" });
  });

  it("keeps the ErrorInfo a protocol error already carries", async () => {
    const own = new ConnectError("slow down", Code.ResourceExhausted, undefined, [
      { desc: ErrorInfoSchema, value: create(ErrorInfoSchema, { reason: "rate.limited", domain: "gatehouse" }) },
    ]);
    const thrown = await wireErrorOf(own);
    expect(thrown.code).toBe(Code.ResourceExhausted);
    expect(thrown.findDetails(ErrorInfoSchema).map((info) => info.reason)).toEqual(["rate.limited"]);
  });

  it("keeps protocol errors' codes and gives them a stable reason", async () => {
    const { shape } = await shapeOf(new ConnectError("too slow", Code.DeadlineExceeded));
    expect(shape).toMatchObject({ code: Code.DeadlineExceeded, reason: "rpc.deadline_exceeded" });
  });

  it("maps an error a streaming handler throws after its first message, like a unary one", async () => {
    const logs = new LogCapture();
    const logger = createLogger("info", logs);
    const transport = createRouterTransport(
      (router) =>
        router.service(Health, {
          check: () => Promise.reject(new Error("unused")),
          list: () => Promise.reject(new Error("unused")),
          async *watch() {
            yield { status: HealthCheckResponse_ServingStatus.SERVING };
            throw alreadyExists("watch.conflict", "a second watcher", { service: "x" });
          },
        }),
      { router: { interceptors: [createErrorMappingInterceptor(logger)] } },
    );
    const received: HealthCheckResponse_ServingStatus[] = [];
    const error = await (async () => {
      for await (const update of createClient(Health, transport).watch({ service: "" })) received.push(update.status);
    })().then(
      () => expect.fail("the stream ended without its error"),
      (thrown: unknown) => errorShape(thrown),
    );
    expect(received).toEqual([HealthCheckResponse_ServingStatus.SERVING]);
    expect(error).toMatchObject({ code: Code.AlreadyExists, reason: "watch.conflict", metadata: { service: "x" } });
  });
});

describe("a stream that fails because its call ended", () => {
  /** Runs a stream through the error mapping and the observation whose source yields once, then fails with `error` (after the call ended, when `ended`). */
  async function streamFailing(error: Error, ended: boolean) {
    const logs = new LogCapture();
    const logger = createLogger("info", logs);
    const call = new AbortController();
    const contextValues = createContextValues();
    contextValues.set(requestIdKey, "req-stream");
    const source = async () =>
      ({
        stream: true,
        header: new Headers(),
        trailer: new Headers(),
        message: (async function* () {
          yield create(HealthCheckResponseSchema, { status: HealthCheckResponse_ServingStatus.SERVING });
          if (ended) call.abort();
          throw error;
        })(),
      }) as never;
    const chain = createObserveInterceptor(logger, createMetrics())(createErrorMappingInterceptor(logger)(source));
    const req = { service: Health, method: Health.method.watch, stream: true, contextValues, signal: call.signal, header: new Headers(), requestMethod: "POST", url: "" } as never;
    const res = (await chain(req)) as unknown as { message: AsyncIterable<unknown> };
    let thrown: unknown;
    try {
      for await (const _ of res.message);
    } catch (caught) {
      thrown = caught;
    }
    return { code: ConnectError.from(thrown).code, logs };
  }

  it("is answered and recorded canceled, with no error logged, when the socket fails after the client left", async () => {
    const { code, logs } = await streamFailing(Object.assign(new Error("write after a stream was destroyed"), { code: "ERR_STREAM_DESTROYED" }), true);
    expect(code).toBe(Code.Canceled);
    expect(logs.parsed().filter((line) => line["msg"] === "internal error")).toEqual([]);
    expect(logs.parsed().filter((line) => line["msg"] === "rpc")).toEqual([expect.objectContaining({ code: "canceled", requestId: "req-stream" })]);
  });

  it("is still a fault of the server, logged with its cause, while the call goes on", async () => {
    const { code, logs } = await streamFailing(new Error("a bug"), false);
    expect(code).toBe(Code.Internal);
    expect(logs.parsed().filter((line) => line["msg"] === "internal error")).toHaveLength(1);
    expect(logs.parsed().filter((line) => line["msg"] === "rpc")).toEqual([expect.objectContaining({ code: "internal" })]);
  });
});
