import { createContextValues } from "@connectrpc/connect";
import type { UniversalHandler, UniversalServerRequest } from "@connectrpc/connect/protocol";
import { describe, expect, it } from "vitest";
import { unauthenticated } from "../../src/domain/errors.js";
import type { Principal } from "../../src/domain/principal.js";
import { type Authenticator, createAdmission, createAuthenticationInterceptor } from "../../src/interceptors/authentication.js";
import { admissionRefusalKey, principalKey } from "../../src/interceptors/context-keys.js";
import type { AnyRequest } from "../../src/interceptors/next.js";

// A unary call not let in before its body was read runs on an empty message (decode-check.ts): the authentication
// interceptor must end it with the admission's refusal even when a second look at its token would pass (a token
// created, or a user unlocked, in between), so an empty message never reaches a handler.
const principal: Principal = { userId: "u", orgId: "o", instanceId: "i", tokenId: "t", memberships: [] };
const passes: Authenticator = async () => ({ principal, organization: undefined });
const refusal = unauthenticated("auth.token_invalid", "the token is not valid");
const refuses: Authenticator = async () => {
  throw refusal;
};
const handlerOf = (service: string, methodKind: string) => ({ service: { typeName: service }, method: { methodKind } }) as unknown as UniversalHandler;
const requestWith = (values = createContextValues()) => ({ header: new Headers({ authorization: "Bearer x" }), contextValues: values }) as unknown as UniversalServerRequest;

describe("admission", () => {
  it("refused: false, and the refusal is kept with the call", async () => {
    const request = requestWith();
    expect(await createAdmission(refuses)(request, handlerOf("gatehouse.admin.v1.UserService", "unary"))).toBe(false);
    expect(request.contextValues!.get(admissionRefusalKey)).toBe(refusal);
  });

  it("passed: true, nothing kept", async () => {
    const request = requestWith();
    expect(await createAdmission(passes)(request, handlerOf("gatehouse.admin.v1.UserService", "unary"))).toBe(true);
    expect(request.contextValues!.get(admissionRefusalKey)).toBeUndefined();
  });

  it("streams (read inside the interceptors) and the public services are let in without a look", async () => {
    for (const handler of [handlerOf("gatehouse.admin.v1.UserService", "bidi_streaming"), handlerOf("gatehouse.admin.v1.UserService", "server_streaming"), handlerOf("grpc.health.v1.Health", "unary")]) {
      const request = requestWith();
      expect(await createAdmission(refuses)(request, handler)).toBe(true);
      expect(request.contextValues!.get(admissionRefusalKey)).toBeUndefined();
    }
  });
});

describe("the interceptor after a refused admission", () => {
  const call = (values: ReturnType<typeof createContextValues>) =>
    ({ service: { typeName: "gatehouse.admin.v1.UserService" }, header: new Headers({ authorization: "Bearer x" }), contextValues: values }) as unknown as AnyRequest;

  it("ends the call with the admission's refusal though the token now passes, and never calls the handler", async () => {
    const values = createContextValues().set(admissionRefusalKey, refusal);
    let reached = false;
    const next = createAuthenticationInterceptor(passes)(async () => {
      reached = true;
      return undefined as never;
    });
    await expect(next(call(values))).rejects.toBe(refusal);
    expect(reached).toBe(false);
    expect(values.get(principalKey)).toBeUndefined();
  });

  it("without one, authenticates the call as usual", async () => {
    const values = createContextValues();
    const next = createAuthenticationInterceptor(passes)(async () => undefined as never);
    await next(call(values));
    expect(values.get(principalKey)).toBe(principal);
  });
});
