import { createRegistry, type DescFile, type MessageInitShape, type Registry, toBinary } from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";
import { Code, type ServiceImpl } from "@connectrpc/connect";
import type {
  ServerReflection,
  ServerReflectionRequest,
  ServerReflectionResponseSchema,
} from "../../../gen/grpc/reflection/v1/reflection_pb.js";

type ResponseInit = MessageInitShape<typeof ServerReflectionResponseSchema>;
type MessageResponse = ResponseInit["messageResponse"];

/** The schema: files by name (with everything they import) and their types by name. */
interface Schema {
  files: Map<string, DescFile>;
  types: Registry;
}

/** `file` and everything it imports, transitively, each once, dependencies before their importers. */
function closure(file: DescFile, seen = new Set<string>()): DescFile[] {
  if (seen.has(file.name)) return [];
  seen.add(file.name);
  return [...file.dependencies.flatMap((dependency) => closure(dependency, seen)), file];
}

function indexSchema(roots: DescFile[]): Schema {
  const seen = new Set<string>();
  // By the file's path as reflection clients name it ("pkg/file.proto"); DescFile.name leaves out the extension.
  const files = new Map(roots.flatMap((root) => closure(root, seen)).map((file) => [file.proto.name, file]));
  return { files, types: createRegistry(...files.values()) };
}

/** What reflection clients need for a file: the file first (as grpc's reference server does), then its imports. */
function withDependencies(file: DescFile): Uint8Array[] {
  return [file, ...closure(file).filter((f) => f !== file)].map((f) => toBinary(FileDescriptorProtoSchema, f.proto));
}

function notFound(message: string): MessageResponse {
  return { case: "errorResponse", value: { errorCode: Code.NotFound, errorMessage: message } };
}

function fileOfSymbol(registry: Registry, symbol: string): DescFile | undefined {
  const desc = registry.get(symbol);
  if (desc) return desc.file;
  // A method (`pkg.Service.Method`) is found through its service.
  const service = registry.getService(symbol.slice(0, symbol.lastIndexOf(".")));
  return service?.methods.some((m) => `${service.typeName}.${m.name}` === symbol) ? service.file : undefined;
}

function answer({ files, types: registry }: Schema, serviceNames: string[], request: ServerReflectionRequest): MessageResponse {
  const query = request.messageRequest;
  switch (query.case) {
    case "listServices":
      return { case: "listServicesResponse", value: { service: serviceNames.map((name) => ({ name })) } };
    case "fileByFilename": {
      const file = files.get(query.value);
      return file ? { case: "fileDescriptorResponse", value: { fileDescriptorProto: withDependencies(file) } } : notFound(`no file ${query.value}`);
    }
    case "fileContainingSymbol": {
      const file = fileOfSymbol(registry, query.value);
      return file ? { case: "fileDescriptorResponse", value: { fileDescriptorProto: withDependencies(file) } } : notFound(`no symbol ${query.value}`);
    }
    case "fileContainingExtension": {
      const message = registry.getMessage(query.value.containingType);
      const extension = message && registry.getExtensionFor(message, query.value.extensionNumber);
      return extension
        ? { case: "fileDescriptorResponse", value: { fileDescriptorProto: withDependencies(extension.file) } }
        : notFound(`no extension ${query.value.extensionNumber} of ${query.value.containingType}`);
    }
    case "allExtensionNumbersOfType": {
      const message = registry.getMessage(query.value);
      if (!message) return notFound(`no type ${query.value}`);
      const numbers = [...registry].flatMap((d) => (d.kind === "extension" && d.extendee.typeName === message.typeName ? [d.number] : []));
      return { case: "allExtensionNumbersResponse", value: { baseTypeName: message.typeName, extensionNumber: numbers } };
    }
    default:
      return { case: "errorResponse", value: { errorCode: Code.InvalidArgument, errorMessage: "unsupported reflection request" } };
  }
}

/**
 * gRPC server reflection, so buf curl, grpcurl and Postman can call Gatehouse without proto files.
 * v1 and v1alpha share this implementation: their messages are identical but for the package name.
 */
export function createReflectionService(files: DescFile[], serviceNames: string[]): Partial<ServiceImpl<typeof ServerReflection>> {
  const schema = indexSchema(files);
  return {
    async *serverReflectionInfo(requests) {
      for await (const request of requests) {
        const response: ResponseInit = { validHost: request.host, messageResponse: answer(schema, serviceNames, request) };
        yield response;
      }
    },
  };
}
