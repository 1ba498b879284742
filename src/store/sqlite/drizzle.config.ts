import { defineConfig } from "drizzle-kit";

// `npm run db:generate` writes a new SQLite migration from the schema diff; migrations are committed and
// applied at start-up (src/store/sqlite/db.ts).
export default defineConfig({
  dialect: "sqlite",
  schema: "./src/store/sqlite/schema/index.ts",
  out: "./src/store/sqlite/migrations",
});
