DROP INDEX "users_external_id";--> statement-breakpoint
CREATE UNIQUE INDEX "users_external_id" ON "users" USING btree ("org_id","external_id") WHERE "users"."external_id" IS NOT NULL;