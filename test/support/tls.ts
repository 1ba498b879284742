import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** A self-signed certificate for 127.0.0.1 and localhost, made with the machine's openssl. */
export function makeSelfSignedCertificate(): { certPath: string; keyPath: string; ca: Buffer } {
  const dir = mkdtempSync(join(tmpdir(), "gatehouse-tls-"));
  const certPath = join(dir, "cert.pem");
  const keyPath = join(dir, "key.pem");
  execFileSync("openssl", [
    "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1",
    "-subj", "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost",
    "-keyout", keyPath, "-out", certPath,
  ], { stdio: "ignore" });
  return { certPath, keyPath, ca: readFileSync(certPath) };
}
