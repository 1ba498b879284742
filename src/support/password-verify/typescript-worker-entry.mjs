// Plain JavaScript on purpose: a worker thread starts without its parent's TypeScript loader (tsx
// under `npm start`, vite under vitest), and Node 20 runs a worker's `--import` hooks too late for
// its entry module. So this entry registers tsx in the worker itself, then loads the real worker.
import { workerData } from "node:worker_threads";

const { register } = await import("tsx/esm/api");
register();
await import(workerData.entry);
