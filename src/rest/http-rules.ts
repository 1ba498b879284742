import { type DescMessage, getOption } from "@bufbuild/protobuf";
import type { UniversalHandler } from "@connectrpc/connect/protocol";
import { http } from "../../gen/google/api/annotations_pb.js";

/** One REST route: an HTTP method and path template bound to an RPC. */
export interface RestRoute {
  httpMethod: string;
  /** Matches the path; named groups are the path parameters (proto field names). */
  pattern: RegExp;
  /** Proto field names bound by the path, in order. */
  pathFields: string[];
  /** "*" (the whole body), "" (no body) or a field name. */
  body: string;
  handler: UniversalHandler;
}

/** `/v1/projects/{project_id}/apps/{app_id}` → a regex with one named group per field (one segment each). */
function compileTemplate(template: string): { pattern: RegExp; fields: string[] } {
  const fields: string[] = [];
  const source = template.replace(/[.*+?^$()|[\]\\]/g, "\\$&").replace(/\\?\{([a-z0-9_]+)\\?\}/g, (_m, field: string) => {
    fields.push(field);
    return `(?<${field}>[^/]+)`;
  });
  return { pattern: new RegExp(`^${source}$`), fields };
}

/** Every RPC with a google.api.http annotation becomes a route; the rest stay RPC-only. */
export function restRoutes(handlers: UniversalHandler[]): RestRoute[] {
  return handlers.flatMap((handler) => {
    // Without the annotation, the rule is the empty default: no pattern.
    const rule = getOption(handler.method, http);
    const { case: httpMethod, value } = rule.pattern;
    if (!httpMethod || httpMethod === "custom") return [];
    const { pattern, fields } = compileTemplate(value);
    return [{ httpMethod: httpMethod.toUpperCase(), pattern, pathFields: fields, body: rule.body, handler }];
  });
}

/** The JSON name of a top-level request field given by its proto name (path parameters use proto names). */
export function jsonNameOf(input: DescMessage, protoName: string): string {
  // Stryker disable next-line OptionalChaining: every path parameter of the protos names a field of the request
  return input.fields.find((field) => field.name === protoName)?.jsonName ?? protoName;
}
