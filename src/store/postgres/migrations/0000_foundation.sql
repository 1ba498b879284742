CREATE TABLE "commit_counters" (
	"id" integer PRIMARY KEY NOT NULL,
	"last_sequence" bigint NOT NULL,
	"access_version" bigint NOT NULL,
	CONSTRAINT "commit_counters_one_row" CHECK ("commit_counters"."id" = 1)
);
--> statement-breakpoint
CREATE TABLE "events" (
	"sequence" bigint PRIMARY KEY NOT NULL,
	"instance_id" text NOT NULL,
	"aggregate_type" text NOT NULL,
	"aggregate_id" text NOT NULL,
	"aggregate_version" integer NOT NULL,
	"type" text NOT NULL,
	"payload" text NOT NULL,
	"actor" text NOT NULL,
	"resource_owner" text NOT NULL,
	"created_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "instances" (
	"id" text PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"default_org_id" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "memberships" (
	"id" text PRIMARY KEY NOT NULL,
	"user_id" text NOT NULL,
	"level" text NOT NULL,
	"scope_id" text NOT NULL,
	"owner_org_id" text NOT NULL,
	"project_id" text,
	"roles" json NOT NULL,
	"position" bigint GENERATED ALWAYS AS IDENTITY (sequence name "memberships_position_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1)
);
--> statement-breakpoint
CREATE TABLE "organizations" (
	"id" text PRIMARY KEY NOT NULL,
	"instance_id" text NOT NULL,
	"name" text NOT NULL,
	"name_key" text NOT NULL,
	"state" text DEFAULT 'active' NOT NULL,
	"position" bigint GENERATED ALWAYS AS IDENTITY (sequence name "organizations_position_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1)
);
--> statement-breakpoint
CREATE TABLE "personal_access_tokens" (
	"id" text PRIMARY KEY NOT NULL,
	"user_id" text NOT NULL,
	"secret_hash" text NOT NULL,
	"expires_at" bigint,
	"created_at" bigint NOT NULL,
	"issuer_user_id" text,
	"position" bigint GENERATED ALWAYS AS IDENTITY (sequence name "personal_access_tokens_position_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1)
);
--> statement-breakpoint
CREATE TABLE "user_idp_links" (
	"user_id" text NOT NULL,
	"idp_id" text NOT NULL,
	"external_user_id" text NOT NULL,
	"display_name" text NOT NULL,
	"position" bigint GENERATED ALWAYS AS IDENTITY (sequence name "user_idp_links_position_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1)
);
--> statement-breakpoint
CREATE TABLE "users" (
	"id" text PRIMARY KEY NOT NULL,
	"instance_id" text NOT NULL,
	"org_id" text NOT NULL,
	"type" text NOT NULL,
	"state" text NOT NULL,
	"inactive" boolean DEFAULT false NOT NULL,
	"locked" boolean DEFAULT false NOT NULL,
	"user_name" text NOT NULL,
	"user_name_key" text NOT NULL,
	"machine_name" text,
	"machine_description" text,
	"first_name" text,
	"last_name" text,
	"nick_name" text,
	"display_name" text,
	"preferred_language" text,
	"gender" integer,
	"email" text,
	"email_key" text,
	"email_verified" boolean,
	"phone" text,
	"phone_verified" boolean,
	"password_hash" text,
	"password_change_required" boolean,
	"otp_secret_sealed" text,
	"position" bigint GENERATED ALWAYS AS IDENTITY (sequence name "users_position_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1)
);
--> statement-breakpoint
CREATE TABLE "applications" (
	"id" text PRIMARY KEY NOT NULL,
	"project_id" text NOT NULL,
	"name" text NOT NULL,
	"name_key" text NOT NULL,
	"state" text DEFAULT 'active' NOT NULL,
	"type" text NOT NULL,
	"client_id" text,
	"client_secret_hash" text,
	"settings" json NOT NULL,
	"position" bigint GENERATED ALWAYS AS IDENTITY (sequence name "applications_position_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1)
);
--> statement-breakpoint
CREATE TABLE "identity_providers" (
	"id" text PRIMARY KEY NOT NULL,
	"instance_id" text NOT NULL,
	"org_id" text,
	"owner_id" text NOT NULL,
	"name" text NOT NULL,
	"name_key" text NOT NULL,
	"issuer" text NOT NULL,
	"client_id" text NOT NULL,
	"client_secret_sealed" text NOT NULL,
	"scopes" json NOT NULL,
	"styling_type" integer NOT NULL,
	"auto_register" boolean NOT NULL,
	"position" bigint GENERATED ALWAYS AS IDENTITY (sequence name "identity_providers_position_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1)
);
--> statement-breakpoint
CREATE TABLE "project_grants" (
	"id" text PRIMARY KEY NOT NULL,
	"project_id" text NOT NULL,
	"granted_org_id" text NOT NULL,
	"role_keys" json NOT NULL,
	"position" bigint GENERATED ALWAYS AS IDENTITY (sequence name "project_grants_position_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1)
);
--> statement-breakpoint
CREATE TABLE "project_roles" (
	"project_id" text NOT NULL,
	"role_key" text NOT NULL,
	"display_name" text NOT NULL,
	"position" bigint GENERATED ALWAYS AS IDENTITY (sequence name "project_roles_position_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	CONSTRAINT "project_roles_pkey" PRIMARY KEY("project_id","role_key")
);
--> statement-breakpoint
CREATE TABLE "projects" (
	"id" text PRIMARY KEY NOT NULL,
	"instance_id" text NOT NULL,
	"org_id" text NOT NULL,
	"name" text NOT NULL,
	"name_key" text NOT NULL,
	"state" text DEFAULT 'active' NOT NULL,
	"position" bigint GENERATED ALWAYS AS IDENTITY (sequence name "projects_position_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1)
);
--> statement-breakpoint
CREATE TABLE "one_time_codes" (
	"id" text PRIMARY KEY NOT NULL,
	"user_id" text NOT NULL,
	"kind" text NOT NULL,
	"digest" text NOT NULL,
	"expires_at" bigint NOT NULL,
	"attempts" integer NOT NULL,
	"used_at" bigint
);
--> statement-breakpoint
CREATE TABLE "outbox" (
	"id" text PRIMARY KEY NOT NULL,
	"instance_id" text NOT NULL,
	"template" text NOT NULL,
	"recipient" text NOT NULL,
	"user_id" text,
	"message_sealed" text NOT NULL,
	"status" text NOT NULL,
	"attempts" integer NOT NULL,
	"next_attempt_at" bigint NOT NULL,
	"created_at" bigint NOT NULL,
	"copied_at" bigint,
	"position" bigint GENERATED ALWAYS AS IDENTITY (sequence name "outbox_position_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1)
);
--> statement-breakpoint
CREATE TABLE "password_policies" (
	"instance_id" text PRIMARY KEY NOT NULL,
	"min_length" integer NOT NULL,
	"require_uppercase" boolean NOT NULL,
	"require_lowercase" boolean NOT NULL,
	"require_digit" boolean NOT NULL,
	"require_symbol" boolean NOT NULL
);
--> statement-breakpoint
CREATE TABLE "smtp_configs" (
	"instance_id" text PRIMARY KEY NOT NULL,
	"sender_address" text NOT NULL,
	"sender_name" text NOT NULL,
	"tls" boolean NOT NULL,
	"host" text NOT NULL,
	"user" text NOT NULL,
	"password_sealed" text
);
--> statement-breakpoint
CREATE TABLE "master_key_probe" (
	"id" integer PRIMARY KEY NOT NULL,
	"sealed" text NOT NULL
);
--> statement-breakpoint
ALTER TABLE "memberships" ADD CONSTRAINT "memberships_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "organizations" ADD CONSTRAINT "organizations_instance_id_instances_id_fk" FOREIGN KEY ("instance_id") REFERENCES "public"."instances"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "personal_access_tokens" ADD CONSTRAINT "personal_access_tokens_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "user_idp_links" ADD CONSTRAINT "user_idp_links_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "users" ADD CONSTRAINT "users_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "applications" ADD CONSTRAINT "applications_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "project_grants" ADD CONSTRAINT "project_grants_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "project_grants" ADD CONSTRAINT "project_grants_granted_org_id_organizations_id_fk" FOREIGN KEY ("granted_org_id") REFERENCES "public"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "project_roles" ADD CONSTRAINT "project_roles_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "projects" ADD CONSTRAINT "projects_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "one_time_codes" ADD CONSTRAINT "one_time_codes_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "outbox" ADD CONSTRAINT "outbox_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "events_aggregate_version" ON "events" USING btree ("aggregate_type","aggregate_id","aggregate_version");--> statement-breakpoint
CREATE INDEX "events_resource_owner" ON "events" USING btree ("resource_owner","sequence");--> statement-breakpoint
CREATE UNIQUE INDEX "memberships_user_scope" ON "memberships" USING btree ("user_id","level","scope_id");--> statement-breakpoint
CREATE INDEX "memberships_scope" ON "memberships" USING btree ("level","scope_id");--> statement-breakpoint
CREATE UNIQUE INDEX "organizations_name_key" ON "organizations" USING btree ("instance_id","name_key");--> statement-breakpoint
CREATE INDEX "organizations_list" ON "organizations" USING btree ("instance_id","position");--> statement-breakpoint
CREATE INDEX "personal_access_tokens_user" ON "personal_access_tokens" USING btree ("user_id");--> statement-breakpoint
CREATE UNIQUE INDEX "user_idp_links_external" ON "user_idp_links" USING btree ("idp_id","external_user_id");--> statement-breakpoint
CREATE INDEX "user_idp_links_user" ON "user_idp_links" USING btree ("user_id");--> statement-breakpoint
CREATE UNIQUE INDEX "users_user_name_key" ON "users" USING btree ("instance_id","user_name_key");--> statement-breakpoint
CREATE INDEX "users_list" ON "users" USING btree ("org_id","position");--> statement-breakpoint
CREATE INDEX "users_email" ON "users" USING btree ("instance_id","email_key");--> statement-breakpoint
CREATE UNIQUE INDEX "applications_name_key" ON "applications" USING btree ("project_id","name_key");--> statement-breakpoint
CREATE UNIQUE INDEX "applications_client_id" ON "applications" USING btree ("client_id");--> statement-breakpoint
CREATE INDEX "applications_list" ON "applications" USING btree ("project_id","position");--> statement-breakpoint
CREATE UNIQUE INDEX "identity_providers_name_key" ON "identity_providers" USING btree ("owner_id","name_key");--> statement-breakpoint
CREATE UNIQUE INDEX "project_grants_project_org" ON "project_grants" USING btree ("project_id","granted_org_id");--> statement-breakpoint
CREATE UNIQUE INDEX "projects_name_key" ON "projects" USING btree ("org_id","name_key");--> statement-breakpoint
CREATE INDEX "projects_list" ON "projects" USING btree ("org_id","position");--> statement-breakpoint
CREATE UNIQUE INDEX "one_time_codes_user_kind" ON "one_time_codes" USING btree ("user_id","kind");--> statement-breakpoint
CREATE INDEX "outbox_due" ON "outbox" USING btree ("status","next_attempt_at");--> statement-breakpoint
CREATE INDEX "outbox_user" ON "outbox" USING btree ("user_id");