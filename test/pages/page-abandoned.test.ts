import { connect } from "node:net";
import { describe, expect, it } from "vitest";
import { eventually } from "../support/eventually.js";
import { useTestServer } from "../support/server.js";

/**
 * A browser that closes the tab while its form post is still on the way: nobody is left to answer, so the page is not
 * rendered, nothing is recorded as an internal error, and the access line says 499 (the client went away), as nginx
 * logs it.
 */
const t = useTestServer();
const PATH = "/ui/login/mail/verification";

describe("a page's form post that the client abandons mid-body", () => {
  it("is logged 499 and never as an internal error", async () => {
    const socket = connect(Number(new URL(t.server.url).port), "127.0.0.1");
    await new Promise((resolve) => socket.once("connect", resolve));
    socket.write(
      [
        `POST ${PATH}?userID=u&orgID=o HTTP/1.1`,
        `host: 127.0.0.1`,
        "content-type: application/x-www-form-urlencoded",
        "origin: null",
        "sec-fetch-site: same-origin",
        "content-length: 200",
        "",
        "code=ABC",
      ].join("\r\n"),
    );
    // The headers and part of the body go out before the client does (a socket's writes are sent before its close).
    socket.end();

    const line = await eventually(() => t.server.logs.parsed().find((entry) => entry["msg"] === "page" && entry["path"] === PATH), {
      what: "the page's access line",
    });
    expect(line["status"]).toBe(499);
    expect(t.server.logs.parsed().filter((entry) => entry["requestId"] === line["requestId"] && entry["level"] !== 30)).toEqual([]);
    expect(t.server.logs.text).not.toContain("internal error in a page");
  });
});
