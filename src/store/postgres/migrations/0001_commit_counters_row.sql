-- The one row every commit updates first (src/store/postgres/pg-commits.ts): no event yet, access version 0.
INSERT INTO "commit_counters" ("id", "last_sequence", "access_version") VALUES (1, 0, 0);
