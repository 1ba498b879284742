ALTER TABLE "users" ADD COLUMN "external_id" text;--> statement-breakpoint
CREATE UNIQUE INDEX "users_external_id" ON "users" USING btree ("org_id","external_id");