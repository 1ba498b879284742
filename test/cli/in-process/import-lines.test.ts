import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { countRows, readRows } from "../../../src/cli/import-rows.js";

/**
 * `gatehouse import` reads a JSON Lines file in reads of 256 KiB and cuts it into lines at line feed bytes (issue 14):
 * a row must come out whole and numbered whatever the reads cut, and the count (the progress bar's total) must agree.
 */
const dir = mkdtempSync(join(tmpdir(), "gatehouse-import-lines-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("the lines of a JSON Lines file", () => {
  const write = (name: string, text: string) => {
    const file = join(dir, name);
    writeFileSync(file, text);
    return file;
  };
  const rows = async (file: string) => {
    const out = [];
    for await (const row of readRows(file, "jsonl")) out.push(row);
    return out;
  };

  it("reads JSON Lines whatever the reads cut: a line over several reads, multibyte characters across a cut, CR ends", async () => {
    // The file is read 256 KiB at a time. Lines of two-byte characters (é) put a cut inside a character somewhere; one
    // line of about 800 KB spans four reads; a blank CRLF line and a last line without a line feed end it.
    const name = (i: number) => `user-${i}-${"é".repeat(100 + (i % 7))}`;
    const lines = Array.from({ length: 1_500 }, (_, i) => JSON.stringify({ userName: name(i) }));
    lines.splice(700, 0, JSON.stringify({ userName: "long", profile: { nickName: "ü".repeat(400_000) } }));
    const text = `${lines.join("\r\n")}\r\n\r\n${JSON.stringify({ userName: "last" })}\r`;
    const file = write("reads.jsonl", text);
    expect(Buffer.byteLength(text)).toBeGreaterThan(4 * 256 * 1024);
    const read = await rows(file);
    expect(read.map((row) => row.problem)).toEqual(read.map(() => undefined));
    expect(read.map((row) => row.json?.["userName"])).toEqual([...lines.map((line) => (JSON.parse(line) as { userName: string }).userName), "last"]);
    // The last line's CR is a line end too: not part of its text (its size).
    expect(read.at(-1)).toMatchObject({ number: 1_502, line: 1_503, size: '{"userName":"last"}'.length });
    expect(read[700]!.user?.user?.profile?.nickName).toBe("ü".repeat(400_000));
    expect(await countRows(file, "jsonl")).toBe(1_502);
  });
});
