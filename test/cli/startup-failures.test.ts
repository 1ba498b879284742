import { chmodSync, existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import net from "node:net";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { expectOneLineFailure, freshDir, killStartedCommands, runGatehouse } from "../support/command.js";
import { makeSelfSignedCertificate } from "../support/tls.js";

// Each case starts the real command and reads what an operator sees: one line on stderr, an exit
// code, no stack trace, and — for failures before the data dir is touched — no data dir left behind.
const root = freshDir("startup");
afterEach(killStartedCommands);
afterAll(() => rmSync(root, { recursive: true, force: true }));

const NOBODY = 65534;

describe("start-up failures before anything is written", () => {
  it("a port in use: one line naming the port, and the data dir is not created (the port is bound first)", async () => {
    const occupier = net.createServer();
    await new Promise<void>((resolve) => occupier.listen(0, "127.0.0.1", resolve));
    const { port } = occupier.address() as net.AddressInfo;
    const dataDir = join(root, "port-in-use");
    try {
      const result = await runGatehouse(["serve", "--port", String(port), "--data-dir", dataDir]);
      expectOneLineFailure(result, `port ${port} on 127.0.0.1 is in use: stop what listens there or choose another --port`);
      expect(existsSync(dataDir)).toBe(false);
    } finally {
      await new Promise((resolve) => occupier.close(resolve));
    }
  });

  it("a TLS certificate that is missing: one line naming the file and the flag; no data dir", async () => {
    const dataDir = join(root, "tls-missing");
    const { keyPath } = makeSelfSignedCertificate();
    const certPath = join(root, "no-such-cert.pem");
    const result = await runGatehouse(["serve", "--port", "0", "--data-dir", dataDir, "--tls-cert", certPath, "--tls-key", keyPath]);
    expectOneLineFailure(result, `TLS certificate ${certPath} cannot be read (ENOENT): fix --tls-cert or the file's owner and mode`);
    expect(existsSync(dataDir)).toBe(false);
  });

  it("a TLS certificate and a key that do not belong together: one line naming both and the flags; no data dir", async () => {
    const dataDir = join(root, "tls-pair");
    const first = makeSelfSignedCertificate();
    const second = makeSelfSignedCertificate();
    const result = await runGatehouse(["serve", "--port", "0", "--data-dir", dataDir, "--tls-cert", first.certPath, "--tls-key", second.keyPath]);
    expectOneLineFailure(
      result,
      `TLS certificate ${first.certPath} and key ${second.keyPath} are not a valid PEM pair (error:05800074:x509 certificate routines::key values mismatch): fix --tls-cert / --tls-key`,
    );
    expect(existsSync(dataDir)).toBe(false);
  });
});

describe("a data dir that cannot be used", () => {
  it("not creatable (a path under a regular file): one line naming the dir and what to do", async () => {
    const file = join(root, "a-file");
    writeFileSync(file, "not a directory\n");
    const dataDir = join(file, "data");
    const result = await runGatehouse(["serve", "--port", "0", "--data-dir", dataDir]);
    expectOneLineFailure(result, `data dir ${dataDir} cannot be created (ENOTDIR): create it, owned by the user running gatehouse, or choose another --data-dir`);
  });

  it("not writable by the user running gatehouse (nobody, on a root-owned 0755 dir): one line, nothing written", async () => {
    const dataDir = join(root, "root-owned");
    mkdirSync(dataDir, { mode: 0o755 });
    chmodSync(dataDir, 0o755);
    const result = await runGatehouse(["serve", "--port", "0", "--data-dir", dataDir], { uid: NOBODY, gid: NOBODY });
    expectOneLineFailure(result, `data dir ${dataDir} is not writable (EACCES): give the user running gatehouse write access, or choose another --data-dir`);
    expect(readdirSync(dataDir)).toEqual([]);
  });
});

describe("a bad setting names where it came from", () => {
  it("a bad flag value names the flag (exit 2, usage)", async () => {
    const result = await runGatehouse(["serve", "--port", "abc", "--data-dir", join(root, "flag")]);
    expectOneLineFailure(result, `--port must be an integer from 0 to 65535, got "abc"`, 2);
    expect(existsSync(join(root, "flag"))).toBe(false);
  });

  it("a bad environment value names the variable (exit 2, usage)", async () => {
    const result = await runGatehouse(["serve", "--data-dir", join(root, "env")], { env: { GATEHOUSE_PORT: "abc" } });
    expectOneLineFailure(result, `GATEHOUSE_PORT must be an integer from 0 to 65535, got "abc"`, 2);
  });

  it("the flag wins over the environment: with both set, the bad flag is the one named", async () => {
    const result = await runGatehouse(["serve", "--port", "abc", "--data-dir", join(root, "both")], { env: { GATEHOUSE_PORT: "8080" } });
    expectOneLineFailure(result, `--port must be an integer from 0 to 65535, got "abc"`, 2);
  });
});
