// Issue 11: `npm run test:mutation` (and so `.ci/run`) fails when all of src/ scores under 85 %, when a folder of the
// server's rules (domain, access, interceptors, commands) scores under 90 %, or when a group has no record. The verdict
// is scripts/mutation/score-by-folder.mjs's, run here on records made for the test.
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";

const script = new URL("../../scripts/mutation/score-by-folder.mjs", import.meta.url).pathname;
let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

/** A record with `killed` killed and `survived` survived mutants in each named file. */
function record(files: Record<string, { killed: number; survived: number }>): string {
  dir ??= mkdtempSync(join(tmpdir(), "gatehouse-thresholds-"));
  const path = join(dir, `${Object.keys(files).length}-${Math.random().toString(36).slice(2)}.json`);
  const statuses = (counts: { killed: number; survived: number }) => [...Array(counts.killed).fill("Killed"), ...Array(counts.survived).fill("Survived")];
  const body = Object.fromEntries(Object.entries(files).map(([file, counts]) => [file, { mutants: statuses(counts).map((status, id) => ({ id: String(id), status })) }]));
  writeFileSync(path, JSON.stringify({ files: body }));
  return path;
}

const verdict = (...records: string[]) => {
  const run = spawnSync(process.execPath, [script, ...records], { encoding: "utf8" });
  return { status: run.status, out: run.stdout, err: run.stderr };
};

describe("the mutation score's thresholds", () => {
  it("pass at 85 % overall and 90 % in every rule folder", () => {
    const result = verdict(record({ "src/domain/a.ts": { killed: 9, survived: 1 }, "src/transport/b.ts": { killed: 8, survived: 2 } }));
    expect(result.status).toBe(0);
    expect(result.out).toMatch(/src\/domain\s+90\.00%.*≥ 90 PASS/);
    expect(result.out).toMatch(/all\s+85\.00%.*≥ 85 PASS/);
  });

  it("fail under 85 % over all of src/, whatever the rule folders score", () => {
    const result = verdict(record({ "src/commands/a.ts": { killed: 10, survived: 0 }, "src/pages/b.ts": { killed: 6, survived: 4 } }));
    expect(result.status).toBe(1);
    expect(result.err).toContain("all 80.00 % < 85 %");
  });

  it.each(["src/domain", "src/access", "src/interceptors", "src/commands"])("fail when %s is under 90 %, however high the total", (folder) => {
    const result = verdict(record({ [`${folder}/a.ts`]: { killed: 8, survived: 2 }, "src/queries/b.ts": { killed: 90, survived: 0 } }));
    expect(result.status).toBe(1);
    expect(result.err).toContain(`${folder} 80.00 % < 90 %`);
  });

  it("hold other folders to no threshold of their own", () => {
    expect(verdict(record({ "src/pages/a.ts": { killed: 1, survived: 1 }, "src/queries/b.ts": { killed: 98, survived: 0 } })).status).toBe(0);
  });

  it("fail when a group has no record yet", () => {
    const good = record({ "src/domain/a.ts": { killed: 10, survived: 0 } });
    const result = verdict(good, join(dir!, "pages.incremental.json"));
    expect(result.status).toBe(1);
    expect(result.err).toContain("missing results");
  });
});
