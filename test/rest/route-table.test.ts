import { create, type DescService, setExtension } from "@bufbuild/protobuf";
import { MethodOptionsSchema } from "@bufbuild/protobuf/wkt";
import type { UniversalHandler } from "@connectrpc/connect/protocol";
import { describe, expect, it } from "vitest";
import { ApplicationService } from "../../gen/gatehouse/admin/v1/application_pb.js";
import { EventService } from "../../gen/gatehouse/admin/v1/event_pb.js";
import { IdentityProviderService } from "../../gen/gatehouse/admin/v1/identity_provider_pb.js";
import { InstanceService } from "../../gen/gatehouse/admin/v1/instance_pb.js";
import { OrganizationService } from "../../gen/gatehouse/admin/v1/organization_pb.js";
import { ProjectService } from "../../gen/gatehouse/admin/v1/project_pb.js";
import { SmtpService } from "../../gen/gatehouse/admin/v1/smtp_pb.js";
import { UserService } from "../../gen/gatehouse/admin/v1/user_pb.js";
import { Health } from "../../gen/grpc/health/v1/health_pb.js";
import { restRoutes } from "../../src/rest/http-rules.js";
import { http } from "../../gen/google/api/annotations_pb.js";
import { CustomHttpPatternSchema, type HttpRule, HttpRuleSchema } from "../../gen/google/api/http_pb.js";

// The REST route table (src/rest/http-rules.ts) built inside the test, from every RPC of the services: an RPC with a
// google.api.http rule is served at that HTTP method and path, each `{field}` one path segment bound to that field;
// every other RPC is RPC-only. (The servers of the REST tests build their table before any test runs, which
// per-test mutation coverage does not see; this states the table's rules where it does.)
const SERVICES: DescService[] = [ApplicationService, EventService, IdentityProviderService, InstanceService, OrganizationService, ProjectService, SmtpService, UserService, Health];
const handlers = SERVICES.flatMap((service) => service.methods.map((method) => ({ method, requestPath: `/${service.typeName}/${method.name}` }) as unknown as UniversalHandler));
const table = () => restRoutes(handlers).map((route) => ({ rpc: route.handler.method.name, method: route.httpMethod, fields: route.pathFields, body: route.body, pattern: route.pattern }));

/** The google.api.http rules of the protos (API.md's REST table and the operations added since). */
const EXPECTED = [
  ["GetApplication", "GET", "/v1/projects/{project_id}/apps/{app_id}", ""],
  ["UpdateApplication", "PUT", "/v1/projects/{project_id}/apps/{app_id}", "*"],
  ["GetIdentityProvider", "GET", "/v1/idps/{idp_id}", ""],
  ["UpdateIdentityProvider", "PUT", "/v1/idps/{idp_id}", "*"],
  ["GetLockoutPolicy", "GET", "/v1/policies/lockout", ""],
  ["SetLockoutPolicy", "PUT", "/v1/policies/lockout", "*"],
  ["AddProjectGrantMember", "POST", "/v1/projects/{project_id}/grants/{grant_id}/members", "*"],
  ["GetSmtpConfig", "GET", "/v1/smtp", ""],
  ["UpdateSmtpConfig", "PUT", "/v1/smtp", "*"],
  ["CreateHumanUser", "POST", "/v1/users/human", "*"],
  ["VerifyEmail", "POST", "/v1/users/{user_id}/email/verify", "*"],
  ["VerifyPassword", "POST", "/v1/users/password/verify", "*"],
  ["SetPassword", "POST", "/v1/users/{user_id}/password", "*"],
] as const;

/** A concrete path for a template: each `{field}` becomes `<field>-1`. */
const pathOf = (template: string) => template.replace(/\{([a-z_]+)\}/g, "$1-1");

describe("the REST route table", () => {
  it("has one route per google.api.http rule, with its upper-case HTTP method, its path's fields and its body; no other RPC has one", () => {
    const routes = table();
    expect(routes.map(({ rpc, method, fields, body }) => [rpc, method, fields, body]).sort()).toEqual(
      EXPECTED.map(([rpc, method, template, body]) => [rpc, method, [...template.matchAll(/\{([a-z_]+)\}/g)].map((m) => m[1]), body]).sort(),
    );
  });

  it("a route's pattern matches its path exactly, each field one whole segment, and names the segments by field", () => {
    for (const [rpc, , template] of EXPECTED) {
      const { pattern, fields } = table().find((route) => route.rpc === rpc)!;
      const path = pathOf(template);
      const match = pattern.exec(path);
      expect({ rpc, matched: match !== null, groups: match?.groups ?? {} }).toEqual({ rpc, matched: true, groups: Object.fromEntries(fields.map((f) => [f, `${f}-1`])) });
      for (const other of [`${path}/more`, `/prefix${path}`, `${path}/`, path.replace(/^\/v1/, "/v2")]) expect({ rpc, other, match: pattern.test(other) }).toEqual({ rpc, other, match: false });
      if (fields.length) expect({ rpc, twoSegments: pattern.test(path.replace(`${fields[0]}-1`, "a/b")) }).toEqual({ rpc, twoSegments: false });
    }
  });

  /** An RPC with the given google.api.http rule (the protos have no such rule: custom verbs, odd characters). */
  const ruled = (pattern: HttpRule["pattern"]): UniversalHandler => {
    const options = create(MethodOptionsSchema);
    setExtension(options, http, create(HttpRuleSchema, { pattern, body: "*" }));
    const method = UserService.method.verifyEmail;
    return { method: { ...method, proto: { ...method.proto, options } } } as unknown as UniversalHandler;
  };

  it("characters of a template that mean something in a pattern are matched as themselves", () => {
    // A dot, a plus, parentheses or a dollar sign must not widen or break what matches.
    const [route] = restRoutes([ruled({ case: "post", value: "/v1.2/a+b/(x)$/{user_id}:check" })]);
    expect(route!.pathFields).toEqual(["user_id"]);
    expect(route!.pattern.exec("/v1.2/a+b/(x)$/u-1:check")?.groups).toEqual({ user_id: "u-1" });
    for (const other of ["/v1x2/a+b/(x)$/u-1:check", "/v1.2/aab/(x)$/u-1:check", "/v1.2/a+b/x/u-1:check", "/v1.2/a+b/(x)/u-1:check"]) expect({ other, match: route!.pattern.test(other) }).toEqual({ other, match: false });
  });

  it("a custom verb is not served over REST", () => {
    expect(restRoutes([ruled({ case: "custom", value: create(CustomHttpPatternSchema, { kind: "HEAD", path: "/v1/users/{user_id}" }) })])).toEqual([]);
    expect(restRoutes([ruled({ case: "patch", value: "/v1/users/{user_id}" })]).map((route) => route.httpMethod)).toEqual(["PATCH"]);
  });
});
