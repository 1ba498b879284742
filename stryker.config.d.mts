// Types of stryker.config.mjs for the tests that import it (test/tooling/mutation-groups.test.ts).
export const MUTATION_GROUPS: Record<string, string[]>;
export const NOT_MUTATED: string[];
export function runName(groups: string[] | undefined): string;
export const FOCUSED_TESTS: Record<string, string[]>;
export function testsOfRun(groups: string[] | undefined): string[] | undefined;
declare const config: object;
export default config;
