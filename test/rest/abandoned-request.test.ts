import net from "node:net";
import { expect, it } from "vitest";
import { eventually } from "../support/eventually.js";
import { useTestServer } from "../support/server.js";

// A client that hangs up while sending a REST request's body is the client's doing, not a server fault: no call
// runs, the server logs it at info level (not as an internal error, which operators are paged for), and nothing
// is answered to a connection that is gone.
const t = useTestServer({ perTest: true });

it("a client hanging up mid-body on a REST route is logged as the client's doing, never as an internal error", async () => {
  const { port } = new URL(t.server.url);
  const socket = net.connect(Number(port), "127.0.0.1");
  await new Promise((resolve) => socket.once("connect", resolve));
  let received = "";
  socket.on("data", (chunk: Buffer) => (received += chunk.toString("utf8")));
  socket.write(
    `PUT /v1/smtp HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${t.server.adminToken}\r\nContent-Type: application/json\r\n` +
      "Expect: 100-continue\r\nContent-Length: 100\r\n\r\n",
  );
  // The 100 Continue says the server has the request and reads its body now.
  await eventually(() => received.startsWith("HTTP/1.1 100 Continue\r\n\r\n"), { what: "the server to accept the request's headers" });
  socket.write('{"host": "smtp.exa');
  socket.destroy();

  const lines = () => t.server.logs.parsed().filter((line) => String(line.msg).includes("before its request body was complete"));
  await eventually(() => lines().length === 1, { what: "the hang-up to be logged" });
  expect(lines()[0]).toMatchObject({ level: 30, path: "/v1/smtp" });
  expect(typeof lines()[0]!.requestId).toBe("string");
  expect(t.server.logs.parsed().filter((line) => Number(line.level) >= 50)).toEqual([]);
  expect(t.server.logs.text).not.toContain("internal error");
});
