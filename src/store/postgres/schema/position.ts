import { bigint } from "drizzle-orm/pg-core";

/**
 * The order rows were added in, for lists and their page cursors: SQLite's rowid, which PostgreSQL has not. Assigned
 * at insert; commits are serialized (postgres/pg-commits.ts), so it follows commit order. Never part of a row the
 * store returns (rows.ts): reads leave it out (postgres/pg-columns.ts).
 */
export const position = () => bigint("position", { mode: "number" }).notNull().generatedAlwaysAsIdentity();
