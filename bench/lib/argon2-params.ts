import { readFileSync } from "node:fs";
import { REPO } from "./servers.js";

/**
 * Gatehouse's argon2id parameters, read from the source that uses them (they are a module constant,
 * not exported), so the bare loop always hashes exactly like CreateHumanUser does.
 */
export function gatehouseArgon2Options(): Record<string, number> {
  const file = "src/commands/human-user.ts";
  const source = readFileSync(`${REPO}${file}`, "utf8");
  const literal = /const ARGON2_OPTIONS = \{([^}]*)\}/.exec(source)?.[1];
  if (!literal) throw new Error(`ARGON2_OPTIONS not found in ${file}: update bench/lib/argon2-params.ts`);
  const options: Record<string, number> = {};
  for (const [, key, value] of literal.matchAll(/(\w+):\s*([\d_]+)/g)) options[key!] = Number(value!.replaceAll("_", ""));
  for (const key of ["algorithm", "memoryCost", "timeCost", "parallelism"]) {
    if (!Number.isInteger(options[key])) throw new Error(`ARGON2_OPTIONS in ${file} has no numeric ${key}: update bench/lib/argon2-params.ts`);
  }
  return options;
}
