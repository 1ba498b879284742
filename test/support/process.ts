import { type ChildProcess, spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../..", import.meta.url));

export interface GatehouseProcess {
  child: ChildProcess;
  url: string;
  lines: string[];
  exit: Promise<number | null>;
}

/** Starts `src/main.ts` as its own process (what `npm start` runs) and waits until it listens. */
export async function spawnGatehouse(env: Record<string, string>): Promise<GatehouseProcess> {
  const child = spawn(process.execPath, ["--import", "tsx", "src/main.ts"], {
    cwd: root,
    env: { ...process.env, GATEHOUSE_PORT: "0", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const lines: string[] = [];
  const exit = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    const reader = createInterface({ input: child.stdout! });
    reader.on("line", (line) => {
      lines.push(line);
      const entry = JSON.parse(line) as { msg?: string; url?: string };
      if (entry.msg === "gatehouse listening" && entry.url) resolve(entry.url);
    });
    void exit.then((code) => reject(new Error(`gatehouse exited with ${code}: ${stderr}`)));
  });
  return { child, url, lines, exit };
}
