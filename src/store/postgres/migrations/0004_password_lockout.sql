CREATE TABLE "lockout_policies" (
	"instance_id" text PRIMARY KEY NOT NULL,
	"max_password_attempts" integer NOT NULL
);
--> statement-breakpoint
ALTER TABLE "users" ADD COLUMN "failed_password_attempts" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "one_time_codes" ADD COLUMN "email_key" text;