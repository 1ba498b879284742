// Types of records.mjs for the tests that import it (test/tooling/mutation-records.test.ts).
export function mergeRecords(root: string, records: object[]): object;
export function splitRecord(record: object, groups: string[], groupOf: (path: string) => string | undefined): Record<string, object>;
export function batchesOf(groups: string[], mutantsOf: (group: string) => number, limit: number): string[][];
