import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { writeOpenApi } from "../src/rest/openapi.js";

const root = fileURLToPath(new URL("..", import.meta.url));
const scratch = mkdtempSync(join(tmpdir(), "gatehouse-gen-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function filesUnder(dir: string): Map<string, string> {
  const files = new Map<string, string>();
  const walk = (current: string) => {
    for (const name of readdirSync(current)) {
      const path = join(current, name);
      if (statSync(path).isDirectory()) walk(path);
      else files.set(relative(dir, path), readFileSync(path, "utf8"));
    }
  };
  walk(dir);
  return files;
}

describe("committed generated files are fresh", () => {
  it("gen/ (code and openapi.json) equals what `npm run generate` makes from proto/ now", () => {
    execFileSync(join(root, "node_modules/.bin/buf"), ["generate", "--output", scratch], {
      cwd: root,
      env: { ...process.env, PATH: `${join(root, "node_modules/.bin")}:${process.env.PATH}` },
    });
    writeOpenApi(root, join(scratch, "gen/openapi.json"));
    const fresh = filesUnder(join(scratch, "gen"));
    // Mutation testing runs the suite on a sandbox copy whose TypeScript files Stryker marks `// @ts-nocheck`.
    const committed = new Map([...filesUnder(join(root, "gen"))].map(([path, text]) => [path, text.replace(/^\/\/ @ts-nocheck\n/, "")]));
    expect([...committed.keys()].sort()).toEqual([...fresh.keys()].sort());
    for (const [path, content] of fresh) expect(committed.get(path), `gen/${path} is stale: run npm run generate`).toBe(content);
  });

  it("proto/vendor equals what the vendoring script makes from the installed packages", () => {
    const out = join(scratch, "vendor");
    execFileSync(process.execPath, [join(root, "proto/vendor/update-vendored.mjs"), out], { cwd: root });
    const fresh = filesUnder(out);
    const committed = filesUnder(join(root, "proto/vendor"));
    for (const [path, content] of fresh) expect(committed.get(path), `proto/vendor/${path} is stale: run npm run generate`).toBe(content);
  });
});
