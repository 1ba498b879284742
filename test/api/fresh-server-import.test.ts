import { describe, expect, it } from "vitest";
import { OnConflict, UserService } from "../../gen/gatehouse/admin/v1/user_pb.js";
import { importedUser, resultShape, streamImport } from "../support/import.js";
import { withFreshServer } from "../support/server.js";

// The import's handlers are built when a server starts (src/api/user/import-human-users.ts). A test file's shared
// server builds them in beforeAll; this test starts its own server inside the test, so that building them is part of
// what it checks: a server that has just started imports users by the stream and by the batch.

describe("a server that has just started", () => {
  it("imports users by ImportHumanUsers (gRPC stream) and by ImportHumanUsersBatch (Connect JSON)", async () => {
    await withFreshServer(async (server, clients) => {
      const streamed = await streamImport(clients.client(UserService, "grpc-h2c", { token: server.adminToken }), [
        { users: [importedUser("fresh-import-1"), importedUser("fresh-import-2")] },
      ]);
      expect(streamed.flatMap((response) => response.results.map(resultShape))).toMatchObject([
        { index: 0, outcome: "created" },
        { index: 1, outcome: "created" },
      ]);
      expect(streamed.at(-1)?.lastDurableIndex).toBe(1n);
      const users = clients.client(UserService, "connect-json-http1", { token: server.adminToken });
      const batch = await users.importHumanUsersBatch({ users: [importedUser("fresh-import-1"), importedUser("fresh-import-3")], onConflict: OnConflict.SKIP });
      expect(batch.results.map(resultShape)).toMatchObject([
        { index: 0, outcome: "skipped" },
        { index: 1, outcome: "created" },
      ]);
      expect((await users.listUsers({ userName: "fresh-import-3" })).users).toHaveLength(1);
    });
  });
});
