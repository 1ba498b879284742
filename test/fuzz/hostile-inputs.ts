import type { DescMethod } from "@bufbuild/protobuf";
import { gzipSync } from "node:zlib";
import { SmtpService } from "../../gen/gatehouse/admin/v1/smtp_pb.js";
import { mutateBinary, mutateJson, randomBinary, randomJson, type Rng } from "./random-messages.js";
import { SERVED_SERVICES } from "../../src/routes.js";
import { envelope, type WireRequest } from "./wire.js";

const METHODS: DescMethod[] = SERVED_SERVICES.flatMap((service) => service.methods);

/** One generated input: where it goes and what it is, for the failure report. */
export interface HostileInput {
  transport: "h1" | "h2";
  kind: string;
  request: WireRequest;
}

const REST_TEMPLATES = ["/v1/users/human", "/v1/smtp", "/v1/idps/{}", "/v1/projects/{}/grants/{}/members", "/v1/projects/{}/apps/{}", "/v1/users/{}/email/verify"];
const SEGMENTS = ["%ZZ", "%", "%E0%A4%A", "%C0%80", "%00", "%F0%9F%98%80", encodeURIComponent("ü😀ñ"), "..", "%2F", "%2e%2e", "id-1", "x".repeat(300), "y".repeat(12_000), "a;b=c", "*"];
const METHOD_NAMES = ["GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "HEAD", "TRACE", "FOO", "CONNECTX"];
const RPC_CONTENT_TYPES = {
  connectJson: ["application/json", "application/json; charset=utf-8", "application/json;charset=latin1"],
  connectProto: ["application/proto"],
  connectStream: ["application/connect+proto", "application/connect+json"],
  grpc: ["application/grpc", "application/grpc+proto", "application/grpc+json"],
  grpcWeb: ["application/grpc-web", "application/grpc-web+proto", "application/grpc-web+json", "application/grpc-web-text"],
  wrong: ["", "text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "application/grpc-webby", "application/PROTO", "*/*"],
};

function hostileHeaders(rng: Rng, token: string | undefined): Record<string, string> {
  const headers: Record<string, string> = {};
  if (token) headers.authorization = `Bearer ${token}`;
  else if (rng.chance(0.3)) headers.authorization = rng.pick(["Bearer ", "Bearer garbage", "Basic YWRtaW46YWRtaW4=", "bearer x.y.z", "Bearer " + "t".repeat(5000)]);
  if (rng.chance(0.15)) headers["x-service-orgid"] = rng.pick(["", "org-1", "x".repeat(300), "' OR 1=1"]);
  if (rng.chance(0.1)) headers["connect-protocol-version"] = rng.pick(["1", "2", ""]);
  if (rng.chance(0.1)) headers["connect-timeout-ms"] = rng.pick(["abc", "-1", "99999999999", "0", "10"]);
  if (rng.chance(0.1)) headers["grpc-timeout"] = rng.pick(["1H", "xyz", "99999999S", "0m", "5n", "100000000000M"]);
  if (rng.chance(0.1)) headers["x-request-id"] = rng.pick(["ok-id", "bad id", "x".repeat(100)]);
  if (rng.chance(0.05)) headers["grpc-accept-encoding"] = rng.pick(["gzip", "snappy", "br,gzip"]);
  return headers;
}

/** Messages in length-prefixed frames, with the framing itself often wrong. */
function frames(rng: Rng, message: Uint8Array, encodingHeader: string, headers: Record<string, string>): Buffer {
  switch (rng.int(10)) {
    case 0:
      return envelope(message, 0, message.byteLength + 1 + rng.int(100)); // promises more than it sends
    case 1:
      return envelope(message, 0, Math.max(0, message.byteLength - 1 - rng.int(5))); // the rest reads as the next frame
    case 2:
      return envelope(message, rng.int(256)); // any flags
    case 3:
      return envelope(message).subarray(0, rng.int(5)); // cut inside the prefix
    case 4:
      return Buffer.concat([envelope(message), envelope(message), envelope(message)]);
    case 5:
      return Buffer.alloc(0);
    case 6: // compressed flag: sometimes with a real encoding, sometimes with none, sometimes a lie
      if (rng.chance(0.5)) headers[encodingHeader] = rng.pick(["gzip", "br", "identity", "snappy", ""]);
      return envelope(rng.chance(0.5) ? gzipSync(message) : message, 1);
    case 7:
      return envelope(message, 0, 0xffffffff);
    default:
      return envelope(message);
  }
}

/** The next hostile input. `token` is the admin token, used on about half of the inputs. */
export function nextInput(rng: Rng, adminToken: string): HostileInput {
  const method = rng.pick(METHODS);
  // SMTP RPCs never get a valid token: a fuzzed relay address would make the server dial out.
  const token = method.parent.typeName !== SmtpService.typeName && rng.chance(0.5) ? adminToken : undefined;
  const headers = hostileHeaders(rng, token);
  const path = rng.chance(0.95) ? `/${method.parent.typeName}/${method.name}` : rng.pick([`/${method.parent.typeName}/Nope`, "/", "/gatehouse.admin.v1.UserService/", `/${method.parent.typeName}/${method.name}/extra`]);
  const json = randomJson(rng, method.input);
  const binary = randomBinary(rng, method.input);
  const jsonBody = () => (rng.chance(0.7) ? mutateJson(rng, method.input, json) : Buffer.from(JSON.stringify(json)));
  const binaryBody = () => (rng.chance(0.7) ? mutateBinary(rng, binary) : binary);

  const kind = rng.int(7);
  if (kind === 0) {
    headers["content-type"] = rng.pick(RPC_CONTENT_TYPES.connectJson);
    if (rng.chance(0.05)) headers["content-encoding"] = rng.pick(["gzip", "br", "snappy"]);
    return { transport: rng.chance(0.5) ? "h1" : "h2", kind: "connect-json", request: { path, headers, body: jsonBody() } };
  }
  if (kind === 1) {
    headers["content-type"] = rng.pick(RPC_CONTENT_TYPES.connectProto);
    const body = binaryBody();
    if (rng.chance(0.1)) headers["content-encoding"] = rng.pick(["gzip", "br", "snappy", "identity"]);
    return { transport: rng.chance(0.5) ? "h1" : "h2", kind: "connect-proto", request: { path, headers, body: headers["content-encoding"] === "gzip" && rng.chance(0.5) ? gzipSync(body) : body } };
  }
  if (kind === 2 || kind === 3) {
    const grpc = kind === 2;
    const contentType = rng.pick(grpc ? RPC_CONTENT_TYPES.grpc : RPC_CONTENT_TYPES.grpcWeb);
    headers["content-type"] = contentType;
    if (grpc) headers.te = "trailers";
    const message = contentType.includes("json") ? jsonBody() : binaryBody();
    const body = frames(rng, message, "grpc-encoding", headers);
    return { transport: grpc ? (rng.chance(0.9) ? "h2" : "h1") : rng.chance(0.5) ? "h1" : "h2", kind: grpc ? "grpc" : "grpc-web", request: { path, headers, body } };
  }
  if (kind === 4) {
    const contentType = rng.pick(RPC_CONTENT_TYPES.connectStream);
    headers["content-type"] = contentType;
    const body = frames(rng, contentType.includes("json") ? jsonBody() : binaryBody(), "connect-content-encoding", headers);
    return { transport: rng.chance(0.5) ? "h1" : "h2", kind: "connect-stream", request: { path, headers, body } };
  }
  if (kind === 5) {
    headers["content-type"] = rng.pick(RPC_CONTENT_TYPES.wrong);
    if (!headers["content-type"]) delete headers["content-type"];
    return { transport: rng.chance(0.5) ? "h1" : "h2", kind: "wrong-content-type", request: { method: rng.pick(["POST", "POST", "GET", "PUT"]), path, headers, body: rng.chance(0.5) ? binaryBody() : jsonBody() } };
  }
  const template = rng.pick(REST_TEMPLATES);
  const restPath = template.replace(/\{\}/g, () => rng.pick(SEGMENTS)) + (rng.chance(0.1) ? rng.pick(["?a=%ZZ", "?userId=1&userId=2", "?x=" + "q".repeat(500)]) : "");
  headers["content-type"] = "application/json";
  return {
    transport: rng.chance(0.6) ? "h1" : "h2",
    kind: "rest",
    request: { method: rng.pick(METHOD_NAMES), path: rng.chance(0.9) ? restPath : `/${rng.pick(SEGMENTS)}/${rng.pick(SEGMENTS)}`, headers, body: jsonBody() },
  };
}
