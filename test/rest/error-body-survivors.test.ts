import { Code } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { fromConnectError, internalErrorBody, specError } from "../../src/rest/error-body.js";

// The SPEC section 7 body of REST answers (src/rest/error-body.ts): `{code: <gRPC code int>, message, details}` with
// the API.md HTTP status; every error carries a google.rpc.ErrorInfo in the `gatehouse` domain; an unexpected error
// tells the caller only the request id its cause is logged under.
const ERROR_INFO = "type.googleapis.com/google.rpc.ErrorInfo";

describe("specError", () => {
  it("without details has an empty details list", () => {
    expect(specError(Code.NotFound, "no such thing")).toEqual({ status: 404, body: { code: 5, message: "no such thing", details: [] } });
  });
});

describe("internalErrorBody", () => {
  it("is 500 internal, names only the request id, with ErrorInfo reason internal and the request id as metadata", () => {
    expect(internalErrorBody("req-42")).toEqual({
      status: 500,
      body: {
        code: 13,
        message: "internal error (request id req-42)",
        details: [{ "@type": ERROR_INFO, reason: "internal", domain: "gatehouse", metadata: { requestId: "req-42" } }],
      },
    });
  });
});

describe("fromConnectError", () => {
  it("an error without code, message or details is unknown (500), still with ErrorInfo and a message", () => {
    expect(fromConnectError({})).toEqual({
      status: 500,
      body: { code: 2, message: "Unknown", details: [{ "@type": ERROR_INFO, reason: "rpc.unknown", domain: "gatehouse", metadata: {} }] },
    });
  });

  it("an error without ErrorInfo gets one named after its code, before its other details", () => {
    const { status, body } = fromConnectError({
      code: "failed_precondition",
      message: "not now",
      details: [{ type: "google.rpc.BadRequest", debug: { fieldViolations: [{ field: "x", description: "is wrong" }] } }],
    });
    expect(status).toBe(400);
    expect(body).toEqual({
      code: 9,
      message: "not now",
      details: [
        { "@type": ERROR_INFO, reason: "rpc.failed_precondition", domain: "gatehouse", metadata: {} },
        { "@type": "type.googleapis.com/google.rpc.BadRequest", fieldViolations: [{ field: "x", description: "is wrong" }] },
      ],
    });
  });

  it("an error with ErrorInfo keeps it as it is, and gets no second one", () => {
    const { body } = fromConnectError({ code: "not_found", message: "gone", details: [{ type: "google.rpc.ErrorInfo", debug: { reason: "user.not_found", domain: "gatehouse" } }] });
    expect(body.details).toEqual([{ "@type": ERROR_INFO, reason: "user.not_found", domain: "gatehouse" }]);
    const mixed = fromConnectError({
      code: "invalid_argument",
      message: "bad",
      details: [{ type: "google.rpc.BadRequest", debug: { fieldViolations: [] } }, { type: "google.rpc.ErrorInfo", debug: { reason: "user.invalid" } }],
    });
    expect(mixed.body.details).toEqual([
      { "@type": "type.googleapis.com/google.rpc.BadRequest", fieldViolations: [] },
      { "@type": ERROR_INFO, reason: "user.invalid" },
    ]);
  });

  it("an error with no message gets the code's name as message", () => {
    expect(fromConnectError({ code: "permission_denied" }).body.message).toBe("PermissionDenied");
  });

  it.each([
    ["canceled", 1, 499],
    ["unknown", 2, 500],
    ["invalid_argument", 3, 400],
    ["deadline_exceeded", 4, 504],
    ["not_found", 5, 404],
    ["already_exists", 6, 409],
    ["permission_denied", 7, 403],
    ["resource_exhausted", 8, 429],
    ["failed_precondition", 9, 400],
    ["aborted", 10, 409],
    ["out_of_range", 11, 400],
    ["unimplemented", 12, 501],
    ["internal", 13, 500],
    ["unavailable", 14, 503],
    ["data_loss", 15, 500],
    ["unauthenticated", 16, 401],
    ["no_such_code", 2, 500],
  ])("code %s is %i, HTTP %i (API.md)", (name, code, status) => {
    const error = fromConnectError({ code: name, message: "m" });
    expect({ code: error.body.code, status: error.status }).toEqual({ code, status });
  });
});
