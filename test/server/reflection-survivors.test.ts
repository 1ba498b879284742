import { fromBinary } from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";
import { Code } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { ServerReflection as ReflectionV1 } from "../../gen/grpc/reflection/v1/reflection_pb.js";
import { ServerReflection as ReflectionV1alpha } from "../../gen/grpc/reflection/v1alpha/reflection_pb.js";
import { useTestServer } from "../support/server.js";

// gRPC server reflection (grpc/reflection/v1/reflection.proto), the way buf curl and grpcurl use it: every request of
// the stream is answered, file answers hold the file asked for first and then what it imports, and what is not there is
// an in-band error_response NOT_FOUND (not a failed stream) whose message names what was asked for.

const t = useTestServer();

type Answer = { case: string | undefined; value?: unknown };

describe.each([
  ["v1", ReflectionV1],
  ["v1alpha", ReflectionV1alpha],
] as const)("gRPC server reflection %s: every kind of request", (_version, service) => {
  /** Sends the requests on one stream; returns the answers in order. */
  async function askAll(...requests: Record<string, unknown>[]) {
    const reflection = t.clients.client(service as typeof ReflectionV1, "grpc-h2c");
    async function* stream() {
      for (const [index, messageRequest] of requests.entries()) yield { host: `host-${index}`, messageRequest } as never;
    }
    const answers: { validHost: string; messageResponse: Answer }[] = [];
    for await (const response of reflection.serverReflectionInfo(stream())) answers.push(response);
    return answers;
  }
  const ask = async (request: Record<string, unknown>) => (await askAll(request))[0]!.messageResponse;

  function fileNames(answer: Answer): string[] {
    expect(answer.case).toBe("fileDescriptorResponse");
    const { fileDescriptorProto } = answer.value as { fileDescriptorProto: Uint8Array[] };
    return fileDescriptorProto.map((bytes) => fromBinary(FileDescriptorProtoSchema, bytes).name);
  }
  function notFound(answer: Answer) {
    expect(answer.case).toBe("errorResponse");
    const { errorCode, errorMessage } = answer.value as { errorCode: number; errorMessage: string };
    expect(errorCode).toBe(Code.NotFound);
    return errorMessage;
  }

  it("answers every request of one stream, in order, each naming the host it was asked for", async () => {
    const answers = await askAll(
      { case: "listServices", value: "" },
      { case: "fileContainingSymbol", value: "gatehouse.admin.v1.User" },
      { case: "fileContainingSymbol", value: "no.such.Thing" },
    );
    expect(answers.map((a) => [a.validHost, a.messageResponse.case])).toEqual([
      ["host-0", "listServicesResponse"],
      ["host-1", "fileDescriptorResponse"],
      ["host-2", "errorResponse"],
    ]);
  });

  // A client fetches each import by the name the descriptor gives it ("pkg/file.proto"): that name must resolve.
  it("file_by_filename: the file first, then everything it imports, transitively, each once", async () => {
    const files = fileNames(await ask({ case: "fileByFilename", value: "gatehouse/admin/v1/user.proto" }));
    expect(files[0]).toBe("gatehouse/admin/v1/user.proto");
    expect(files).toEqual(
      expect.arrayContaining([
        "gatehouse/admin/v1/details.proto",
        "buf/validate/validate.proto",
        "google/api/annotations.proto",
        // imported by annotations.proto and validate.proto, not by user.proto itself
        "google/api/http.proto",
        "google/protobuf/descriptor.proto",
        "google/protobuf/timestamp.proto",
      ]),
    );
    expect(new Set(files).size).toBe(files.length);
  });

  it("file_by_filename of a file with no imports is that file alone", async () => {
    expect(fileNames(await ask({ case: "fileByFilename", value: "google/protobuf/timestamp.proto" }))).toEqual(["google/protobuf/timestamp.proto"]);
  });

  it("file_by_filename of an unknown file is NOT_FOUND naming the file", async () => {
    expect(notFound(await ask({ case: "fileByFilename", value: "gatehouse/admin/v1/nothing.proto" }))).toContain("gatehouse/admin/v1/nothing.proto");
  });

  it("file_containing_symbol finds messages, enums and services by their full name, each file once", async () => {
    for (const [symbol, file] of [
      ["gatehouse.admin.v1.User", "gatehouse/admin/v1/user.proto"],
      ["gatehouse.admin.v1.ApplicationState", "gatehouse/admin/v1/application.proto"],
      ["gatehouse.admin.v1.SmtpService", "gatehouse/admin/v1/smtp.proto"],
      ["google.protobuf.Timestamp", "google/protobuf/timestamp.proto"],
    ] as const) {
      const files = fileNames(await ask({ case: "fileContainingSymbol", value: symbol }));
      expect(files[0], symbol).toBe(file);
      expect(new Set(files).size, symbol).toBe(files.length);
    }
  });

  it("file_containing_symbol of a method the service does not have is NOT_FOUND naming the symbol", async () => {
    expect(await ask({ case: "fileContainingSymbol", value: "gatehouse.admin.v1.UserService.GetUser" })).toMatchObject({ case: "fileDescriptorResponse" });
    expect(notFound(await ask({ case: "fileContainingSymbol", value: "gatehouse.admin.v1.UserService.NoSuchMethod" }))).toContain(
      "gatehouse.admin.v1.UserService.NoSuchMethod",
    );
    expect(notFound(await ask({ case: "fileContainingSymbol", value: "no.such.Service.Method" }))).toContain("no.such.Service.Method");
  });

  it("file_containing_extension: the file that declares the extension, with its imports", async () => {
    const http = fileNames(await ask({ case: "fileContainingExtension", value: { containingType: "google.protobuf.MethodOptions", extensionNumber: 72295728 } }));
    expect(http[0]).toBe("google/api/annotations.proto");
    expect(http).toEqual(expect.arrayContaining(["google/api/http.proto", "google/protobuf/descriptor.proto"]));
    const validate = fileNames(await ask({ case: "fileContainingExtension", value: { containingType: "google.protobuf.FieldOptions", extensionNumber: 1159 } }));
    expect(validate[0]).toBe("buf/validate/validate.proto");
  });

  it("file_containing_extension of an unknown number or type is NOT_FOUND naming both", async () => {
    const unknownNumber = notFound(await ask({ case: "fileContainingExtension", value: { containingType: "google.protobuf.MethodOptions", extensionNumber: 4242 } }));
    expect(unknownNumber).toContain("4242");
    expect(unknownNumber).toContain("google.protobuf.MethodOptions");
    const unknownType = notFound(await ask({ case: "fileContainingExtension", value: { containingType: "no.such.Options", extensionNumber: 1159 } }));
    expect(unknownType).toContain("no.such.Options");
  });

  it("all_extension_numbers_of_type: exactly the numbers that extend that type", async () => {
    expect(await ask({ case: "allExtensionNumbersOfType", value: "google.protobuf.FieldOptions" })).toEqual({
      case: "allExtensionNumbersResponse",
      value: expect.objectContaining({ baseTypeName: "google.protobuf.FieldOptions", extensionNumber: [1159, 1160] }),
    });
    expect(await ask({ case: "allExtensionNumbersOfType", value: "google.protobuf.MethodOptions" })).toEqual({
      case: "allExtensionNumbersResponse",
      value: expect.objectContaining({ baseTypeName: "google.protobuf.MethodOptions", extensionNumber: [72295728] }),
    });
    expect(await ask({ case: "allExtensionNumbersOfType", value: "gatehouse.admin.v1.User" })).toEqual({
      case: "allExtensionNumbersResponse",
      value: expect.objectContaining({ baseTypeName: "gatehouse.admin.v1.User", extensionNumber: [] }),
    });
  });

  it("all_extension_numbers_of_type of an unknown type is NOT_FOUND naming the type", async () => {
    expect(notFound(await ask({ case: "allExtensionNumbersOfType", value: "no.such.Message" }))).toContain("no.such.Message");
  });

  it("a request that asks nothing is INVALID_ARGUMENT in-band, with a message", async () => {
    const answer = await ask({ case: undefined });
    expect(answer.case).toBe("errorResponse");
    const { errorCode, errorMessage } = answer.value as { errorCode: number; errorMessage: string };
    expect(errorCode).toBe(Code.InvalidArgument);
    expect(errorMessage).not.toBe("");
  });
});
