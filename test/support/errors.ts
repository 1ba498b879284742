import { ConnectError } from "@connectrpc/connect";
import { expect } from "vitest";
import { BadRequestSchema, ErrorInfoSchema } from "../../gen/google/rpc/error_details_pb.js";

/** The typed parts of an error a client sees: code, ErrorInfo reason and domain, field violations. */
export interface ErrorShape {
  code: number;
  reason: string | undefined;
  domain: string | undefined;
  metadata: Record<string, string>;
  fields: string[];
  rules: string[];
}

export function errorShape(error: unknown): ErrorShape {
  const connectError = ConnectError.from(error);
  const info = connectError.findDetails(ErrorInfoSchema)[0];
  const violations = connectError.findDetails(BadRequestSchema).flatMap((b) => b.fieldViolations);
  return {
    code: connectError.code,
    reason: info?.reason,
    domain: info?.domain,
    metadata: info?.metadata ?? {},
    fields: violations.map((v) => v.field),
    rules: violations.map((v) => v.reason),
  };
}

/** Awaits a call that must fail and returns its error's shape. */
export async function failure(call: Promise<unknown>): Promise<ErrorShape> {
  try {
    await call;
  } catch (error) {
    return errorShape(error);
  }
  expect.fail("the call succeeded but should have failed");
}
