import { defineConfig } from "drizzle-kit";

// `npx drizzle-kit generate --config src/store/postgres/drizzle.config.ts` writes a new PostgreSQL migration from the
// schema diff; migrations are committed and applied at start-up under an advisory lock (src/store/postgres/pg-db.ts).
export default defineConfig({
  dialect: "postgresql",
  schema: "./src/store/postgres/schema/index.ts",
  out: "./src/store/postgres/migrations",
});
