import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { createBatchedLines } from "../../src/support/batched-lines.js";

// src/support/batched-lines.ts: log lines of one turn of the event loop go out in one write at its end, in order; a
// batch past its size goes at once; flush() writes what is pending; the default logger's pending lines are written
// when the process exits, also through process.exit right after a fatal line.

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

describe("batched log lines", () => {
  it("writes the lines of one turn in one write, in order, at the end of the turn", async () => {
    const writes: string[] = [];
    const lines = createBatchedLines({ write: (text) => writes.push(text) });
    lines.write("a\n");
    lines.write("b\n");
    expect(writes).toEqual([]);
    await nextTurn();
    expect(writes).toEqual(["a\nb\n"]);
    lines.write("c\n");
    await nextTurn();
    expect(writes).toEqual(["a\nb\n", "c\n"]);
    await nextTurn();
    expect(writes).toHaveLength(2);
  });

  it("writes a batch at once when it reaches its size, and flush() writes what is pending", () => {
    const writes: string[] = [];
    const lines = createBatchedLines({ write: (text) => writes.push(text) }, 10);
    lines.write("12345\n");
    expect(writes).toEqual([]);
    lines.write("6789\n");
    expect(writes).toEqual(["12345\n6789\n"]);
    lines.write("x\n");
    lines.flush();
    expect(writes).toEqual(["12345\n6789\n", "x\n"]);
    lines.flush();
    expect(writes).toHaveLength(2);
  });

  it("the default logger's lines reach stdout when the process exits right after them (process.exit after a fatal line)", () => {
    const script = `import { createLogger } from "./src/support/logger.ts"; const l = createLogger("info"); l.info("one"); l.fatal("two"); process.exit(3);`;
    const run = spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], { cwd: process.cwd(), encoding: "utf8" });
    expect(run.status).toBe(3);
    const messages = run.stdout.split("\n").filter(Boolean).map((line) => (JSON.parse(line) as { msg: string }).msg);
    expect(messages).toEqual(["one", "two"]);
  });
});
