// Prints the mutation score per folder of src/ from Stryker's JSON reports (or its incremental files, which hold the
// same statuses) and fails (exit 1) when a folder that holds the server's rules, or all of src/, scores below its
// threshold (issue 11). Stryker's own `thresholds.break` guards each group of rule folders as its run ends
// (stryker.config.mjs); the total over all groups is only known here.
// The score is Stryker's: killed + timed out over every valid mutant (survived and not covered count against it;
// ignored, static-ignored and compile errors do not count at all).
import { existsSync, readFileSync } from "node:fs";

const REPORTS = process.argv.slice(2);
const FOLDER_THRESHOLDS = { "src/domain": 90, "src/access": 90, "src/interceptors": 90, "src/commands": 90 };
const OVERALL_THRESHOLD = 85;

const DETECTED = new Set(["Killed", "Timeout"]);
const UNDETECTED = new Set(["Survived", "NoCoverage"]);

const folders = new Map();
const tally = (key, status) => {
  const entry = folders.get(key) ?? { detected: 0, undetected: 0, ignored: 0 };
  if (DETECTED.has(status)) entry.detected++;
  else if (UNDETECTED.has(status)) entry.undetected++;
  else entry.ignored++;
  folders.set(key, entry);
};
const missing = REPORTS.filter((path) => !existsSync(path));
if (missing.length > 0) console.error(`no result yet in: ${missing.join(", ")} (run their groups)`);
const files = REPORTS.filter((path) => existsSync(path)).flatMap((path) => Object.entries(JSON.parse(readFileSync(path, "utf8")).files));
for (const [file, { mutants }] of files) {
  const path = file.replace(/^.*?(?=src\/)/, "");
  const parts = path.split("/");
  const folder = parts.length > 2 ? `${parts[0]}/${parts[1]}` : "src (top level)";
  for (const mutant of mutants) {
    tally(folder, mutant.status);
    tally("all", mutant.status);
  }
}

const score = ({ detected, undetected }) => (detected + undetected === 0 ? 100 : (100 * detected) / (detected + undetected));
const rows = [...folders.entries()].filter(([key]) => key !== "all").sort(([a], [b]) => a.localeCompare(b));
rows.push(["all", folders.get("all") ?? { detected: 0, undetected: 0, ignored: 0 }]);
const failures = [];
console.log(`${"folder".padEnd(20)} ${"score".padStart(7)} ${"killed".padStart(7)} ${"missed".padStart(7)} ${"ignored".padStart(8)}  threshold`);
for (const [folder, counts] of rows) {
  const threshold = folder === "all" ? OVERALL_THRESHOLD : FOLDER_THRESHOLDS[folder];
  const value = score(counts);
  const verdict = threshold === undefined ? "" : value >= threshold ? `≥ ${threshold} PASS` : `< ${threshold} FAIL`;
  if (threshold !== undefined && value < threshold) failures.push(`${folder} ${value.toFixed(2)} % < ${threshold} %`);
  console.log(
    `${folder.padEnd(20)} ${value.toFixed(2).padStart(6)}% ${String(counts.detected).padStart(7)} ${String(counts.undetected).padStart(7)} ${String(counts.ignored).padStart(8)}  ${verdict}`,
  );
}
if (missing.length > 0) failures.push(`missing results: ${missing.join(", ")}`);
if (failures.length > 0) {
  console.error(`mutation score below threshold: ${failures.join("; ")}`);
  process.exit(1);
}
