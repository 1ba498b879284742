import { defineConfig } from "drizzle-kit";

// `npm run db:generate` writes a new migration from the schema diff; migrations are committed and
// applied at start-up (src/store/db.ts).
export default defineConfig({
  dialect: "sqlite",
  schema: "./src/store/schema/index.ts",
  out: "./src/store/migrations",
});
