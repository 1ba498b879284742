import { describe, expect, it } from "vitest";
import { DomainError } from "../../src/domain/errors.js";
import { isConnectionFailure, toDomainError } from "../../src/store/postgres/pg-errors.js";

// What a client meets when PostgreSQL is out of reach: `unavailable` / store.unavailable (retry later), for the driver's
// socket errors and the server's "not now" SQLSTATEs, also under drizzle's wrapper; a statement's own error is not one.
// (test/postgres/database-outage.test.ts cuts a real server's connections.)

const server = (code: string) => Object.assign(new Error(`server said ${code}`), { code, severity: "FATAL" });
const wrapped = (cause: unknown) => Object.assign(new Error("Failed query: select … params: …"), { cause });

describe("a PostgreSQL error that means the database is out of reach", () => {
  it.each([
    ["connection exception (class 08)", server("08006")],
    ["connection does not exist", server("08003")],
    ["too many connections (class 53)", server("53300")],
    ["disk full (class 53)", server("53100")],
    ["the server shuts down", server("57P01")],
    ["the server crashed", server("57P02")],
    ["the server is starting", server("57P03")],
    ["refused connection", Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED", errno: -111 })],
    ["reset connection", Object.assign(new Error("read ECONNRESET"), { code: "ECONNRESET" })],
    ["unknown host", Object.assign(new Error("getaddrinfo ENOTFOUND db"), { code: "ENOTFOUND" })],
    ["connection cut", new Error("Connection terminated unexpectedly")],
    ["connect timeout", new Error("Connection terminated due to connection timeout")],
    ["pool timeout", new Error("timeout exceeded when trying to connect")],
    ["broken client", new Error("Client has encountered a connection error and is not queryable")],
    ["under drizzle's wrapper", wrapped(server("57P01"))],
  ])("%s: store.unavailable", (_, error) => {
    expect(isConnectionFailure(error)).toBe(true);
    const mapped = toDomainError(error);
    expect(mapped).toBeInstanceOf(DomainError);
    expect(mapped).toMatchObject({ kind: "unavailable", reason: "store.unavailable" });
    expect((mapped as Error).message).not.toMatch(/params|select|5432|db/);
  });

  it.each([
    ["a unique violation", server("23505")],
    ["a syntax error", server("42601")],
    ["a query cancelled by the administrator", server("57014")],
    ["a server SQLSTATE of class 57 outside 57P01-57P03", server("57P04")],
    ["a bug in our code", new TypeError("cannot read properties of undefined")],
    ["a wrapped statement error", wrapped(server("42P01"))],
  ])("%s: not a connection failure", (_, error) => {
    expect(isConnectionFailure(error)).toBe(false);
    expect(toDomainError(error)).not.toMatchObject({ reason: "store.unavailable" });
  });
});
