// After tsc: the files the compiled server reads at run time besides its JavaScript (the OpenAPI
// document, the SQL migrations and the page check's worker, next to the modules that read them by relative URL), and the
// executable bit of the `gatehouse` command.
import { chmodSync, cpSync, rmSync } from "node:fs";

const copies = [
  ["gen/openapi.json", "dist/gen/openapi.json"],
  ["src/store/sqlite/migrations", "dist/src/store/sqlite/migrations"],
  ["src/store/postgres/migrations", "dist/src/store/postgres/migrations"],
  // The start-up page check's worker thread is plain JavaScript (src/store/sqlite/sqlite-file.ts).
  ["src/store/sqlite/page-check-worker.mjs", "dist/src/store/sqlite/page-check-worker.mjs"],
];
for (const [from, to] of copies) {
  rmSync(to, { recursive: true, force: true });
  cpSync(from, to, { recursive: true });
}
chmodSync("dist/src/main.js", 0o755);
