import { ConnectError } from "@connectrpc/connect";
import { expect } from "vitest";
import { BadRequestSchema, ErrorInfoSchema } from "../../gen/google/rpc/error_details_pb.js";

/** The typed parts of an error a client sees: code, message, ErrorInfo reason and domain, field violations. */
export interface ErrorShape {
  code: number;
  message: string;
  reason: string | undefined;
  domain: string | undefined;
  metadata: Record<string, string>;
  fields: string[];
  rules: string[];
}

/**
 * Reads an error as a client sees it. Every error Gatehouse answers must also explain itself to a person: a message
 * that is neither empty nor just the reason (API.md "Errors"; the brief's "clear, typed 4xx error") — checked here,
 * so every test that looks at an error checks it too.
 */
export function errorShape(error: unknown): ErrorShape {
  const connectError = ConnectError.from(error);
  expect(connectError.rawMessage.trim(), "the error has a message for people").not.toBe("");
  const info = connectError.findDetails(ErrorInfoSchema)[0];
  const violations = connectError.findDetails(BadRequestSchema).flatMap((b) => b.fieldViolations);
  expect(connectError.rawMessage, "the message says more than the reason").not.toBe(info?.reason);
  for (const violation of violations) {
    expect(violation.description.trim(), `the violation of ${violation.field} says what is wrong`).not.toBe("");
  }
  return {
    code: connectError.code,
    message: connectError.rawMessage,
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
