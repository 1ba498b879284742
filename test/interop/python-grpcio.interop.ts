import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { useTestServer } from "../support/server.js";

const run = promisify(execFile);
const t = useTestServer();
const root = fileURLToPath(new URL("../..", import.meta.url));
const stubs = mkdtempSync(join(tmpdir(), "gatehouse-pystubs-"));
afterAll(() => rmSync(stubs, { recursive: true, force: true }));

/**
 * Debian's python3-grpcio with stubs generated from proto/ by Debian's protoc and gRPC's
 * grpc_python_plugin (Debian's grpc_tools predates proto3 `optional`). .ci/run installs them.
 * Debian's Python modules need /usr/bin/python3, not a pyenv python3 on PATH.
 */
describe("python3-grpcio with stubs generated from proto/", () => {
  it("creates a user, verifies its email, and decodes invalid_argument (BadRequest) and not_found", async () => {
    const files = ["gatehouse/admin/v1/user.proto", "gatehouse/admin/v1/details.proto", "buf/validate/validate.proto", "google/api/annotations.proto", "google/api/http.proto", "google/rpc/error_details.proto", "google/rpc/status.proto"];
    await run("protoc", ["-Iproto", "-Iproto/vendor", `--python_out=${stubs}`, `--grpc_python_out=${stubs}`, "--plugin=protoc-gen-grpc_python=/usr/bin/grpc_python_plugin", ...files], { cwd: root });
    const { stdout } = await run("/usr/bin/python3", [join(root, "test/interop/python/client.py"), new URL(t.server.url).host, t.server.adminToken], {
      env: { ...process.env, PYTHONPATH: stubs },
    });
    const result = JSON.parse(stdout) as Record<string, { code: string; reason: string; fields: string[] } | string | boolean>;
    expect(result.userId).toEqual(expect.any(String));
    expect(result.verifiedOwner).toEqual(expect.any(String));
    expect(result.hasCreationDate).toBe(false);
    expect(result.invalid).toEqual({ code: "INVALID_ARGUMENT", reason: "request.invalid", fields: ["profile.first_name"] });
    expect(result.missing).toEqual({ code: "NOT_FOUND", reason: "user.not_found", fields: [] });
  });
});
