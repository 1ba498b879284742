// Types of freshness.mjs for the tests that import it (test/tooling/mutation-freshness.test.ts).
export function globToRegExp(glob: string): RegExp;
export function mutatedFiles(root: string, globs: string[]): string[];
export function staleness(root: string, globs: string[], recordPath: string, limit?: number): Promise<string[]>;
export function groupOfFile(groups: Record<string, string[]>): (path: string) => string | undefined;
export function mutantCount(root: string, globs: string[]): Promise<number>;
