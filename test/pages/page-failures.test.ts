import { randomBytes } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import type { Deps } from "../../src/context.js";
import { DomainError } from "../../src/domain/errors.js";
import type { Store } from "../../src/store/store.js";
import { createIdGenerator } from "../../src/support/ids.js";
import { createLogger } from "../../src/support/logger.js";
import { createPages } from "../../src/pages/pages.js";
import { LogCapture, TestClock } from "../support/server.js";

/** The pages in front of a store that fails: what a person sees when Gatehouse, not their input, is at fault. */
let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

async function pagesOver(failure: Error) {
  const failing = new Proxy({} as Store, {
    get: () => async () => {
      throw failure;
    },
  });
  const deps: Deps = { store: failing, clock: new TestClock(), ids: createIdGenerator(), masterKey: randomBytes(32), externalUrl: "https://iam.example.com" };
  const logs = new LogCapture();
  const pages = createPages(deps, createLogger("info", logs));
  server = createServer((req, res) => {
    if (!pages(req, res, "request-7")) res.writeHead(418).end();
  });
  await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, logs };
}

describe("a page whose store fails", () => {
  it("answers 500 with the request id for a person to quote, logs the cause under it, never the code", async () => {
    const { url, logs } = await pagesOver(new Error("disk on fire"));
    const response = await fetch(`${url}/ui/login/mail/verification?userID=u1&orgID=o1&code=SECRET`);
    expect(response.status).toBe(500);
    expect(response.headers.get("content-security-policy")).toContain("default-src 'none'");
    const page = await response.text();
    expect(page).toContain("tell your administrator this reference: request-7");
    expect(page).not.toContain("disk on fire");
    const logged = logs.parsed().find((line) => line["msg"] === "internal error in a page");
    expect(logged).toMatchObject({ requestId: "request-7", path: "/ui/login/mail/verification", err: expect.objectContaining({ message: "disk on fire" }) });
    expect(logs.text).not.toContain("SECRET");
  });

  it.each([
    ["busy or unavailable", new DomainError("unavailable", "store.busy", "the database is busy; retry")],
    ["out of capacity (too many password checks at once)", new DomainError("resource_exhausted", "password_verify.busy", "too many password verifications in progress, retry later")],
  ])("answers 503 (try again) when the server is %s", async (_what, failure) => {
    const { url } = await pagesOver(failure);
    const response = await fetch(`${url}/ui/login/user/init?userID=u1&orgID=o1&code=ABCDEF`);
    expect(response.status).toBe(503);
    expect(await response.text()).toContain("Please try again");
  });

  it("leaves every other path to the next handler", async () => {
    const { url } = await pagesOver(new Error("unused"));
    expect((await fetch(`${url}/ui/loginx`)).status).toBe(418);
    expect((await fetch(`${url}/v1/users/human`)).status).toBe(418);
  });
});
