import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { countRows, type ImportRow, readRows } from "../../../src/cli/import-rows.js";

/**
 * `gatehouse import` reads a JSON Lines file in reads of 256 KiB and cuts it into lines at line feed bytes (issue 14):
 * a row must come out whole and numbered whatever the reads cut, and the count (the progress bar's total) must agree.
 */
const dir = mkdtempSync(join(tmpdir(), "gatehouse-import-lines-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const READ = 256 * 1024;

async function rowsOf(name: string, text: string): Promise<{ rows: ImportRow[]; count: number }> {
  const file = join(dir, name);
  writeFileSync(file, text);
  const rows: ImportRow[] = [];
  for await (const row of readRows(file, "jsonl")) rows.push(row);
  return { rows, count: await countRows(file, "jsonl") };
}

describe("the lines of a JSON Lines file", () => {
  it("come out whole whatever the reads cut: a line over several reads, multibyte characters across a cut, CR ends", async () => {
    // Lines of two-byte characters (é) put a cut inside a character somewhere; one line of about 800 KB spans four
    // reads; a blank CRLF line and a last line without a line feed end the file.
    const name = (i: number) => `user-${i}-${"é".repeat(100 + (i % 7))}`;
    const lines = Array.from({ length: 1_500 }, (_, i) => JSON.stringify({ userName: name(i) }));
    lines.splice(700, 0, JSON.stringify({ userName: "long", profile: { nickName: "ü".repeat(400_000) } }));
    const text = `${lines.join("\r\n")}\r\n\r\n${JSON.stringify({ userName: "last" })}\r`;
    expect(Buffer.byteLength(text)).toBeGreaterThan(4 * READ);
    const { rows, count } = await rowsOf("reads.jsonl", text);
    expect(rows.map((row) => row.problem)).toEqual(rows.map(() => undefined));
    expect(rows.map((row) => row.json?.["userName"])).toEqual([...lines.map((line) => (JSON.parse(line) as { userName: string }).userName), "last"]);
    // The last line's CR is a line end too: not part of its text (its size).
    expect(rows.at(-1)).toMatchObject({ number: 1_502, line: 1_503, size: '{"userName":"last"}'.length });
    expect(rows[700]!.user?.user?.profile?.nickName).toBe("ü".repeat(400_000));
    expect(count).toBe(1_502);
  });

  it("end at a CRLF that a read cuts between its CR and its LF", async () => {
    // The first line fills the first read to its last byte, its CR; the LF starts the second read.
    const head = '{"userName":"cut","profile":{"nickName":"';
    const tail = '"}}';
    const first = `${head}${"x".repeat(READ - 1 - head.length - tail.length)}${tail}`;
    expect(first.length + 1).toBe(READ);
    const { rows, count } = await rowsOf("crlf-cut.jsonl", `${first}\r\n{"userName":"next"}\n`);
    expect(rows.map((row) => [row.number, row.line, row.size, row.problem])).toEqual([
      [1, 1, first.length, undefined],
      [2, 2, '{"userName":"next"}'.length, undefined],
    ]);
    expect(count).toBe(2);
  });

  it("of nothing, or of blank lines only, are no rows", async () => {
    for (const [name, text] of [
      ["empty.jsonl", ""],
      ["blank.jsonl", "\n\r\n  \n"],
    ]) {
      expect(await rowsOf(name!, text!)).toEqual({ rows: [], count: 0 });
    }
  });
});
