import type { Code } from "@connectrpc/connect";
import { expect, it } from "vitest";
import { PROTOCOLS, type Protocol } from "./clients.js";
import { failure } from "./errors.js";

/**
 * One row of the error-metadata tables (README "Errors": the ErrorInfo metadata names what the error is about):
 * the refusal a call must get, with its exact metadata and, for invalid_argument, the fields it names.
 */
export interface MetadataCase {
  name: string;
  code: Code;
  reason: string;
  fields?: string[];
  /** Prepares what the case needs; returns the failing call and the metadata it must carry. */
  arrange: (protocol: Protocol) => Promise<{ call: () => Promise<unknown>; metadata: Record<string, string> }>;
}

/** One test per case, the protocols taken in turn, each asserting code, reason, fields and the exact metadata. */
export function itRefusesWithMetadata(cases: MetadataCase[]): void {
  it.each(cases.map((c, i) => ({ ...c, protocol: PROTOCOLS[i % PROTOCOLS.length]! })))("$name ($protocol)", async ({ code, reason, fields = [], arrange, protocol }) => {
    const { call, metadata } = await arrange(protocol);
    const error = await failure(call());
    expect({ code: error.code, reason: error.reason, fields: error.fields, metadata: error.metadata }).toEqual({ code, reason, fields, metadata });
  });
}
