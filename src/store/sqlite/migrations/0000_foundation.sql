CREATE TABLE `events` (
	`sequence` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`instance_id` text NOT NULL,
	`aggregate_type` text NOT NULL,
	`aggregate_id` text NOT NULL,
	`aggregate_version` integer NOT NULL,
	`type` text NOT NULL,
	`payload` text NOT NULL,
	`actor` text NOT NULL,
	`resource_owner` text NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `events_aggregate_version` ON `events` (`aggregate_type`,`aggregate_id`,`aggregate_version`);--> statement-breakpoint
CREATE INDEX `events_resource_owner` ON `events` (`resource_owner`,`sequence`);--> statement-breakpoint
CREATE TABLE `instances` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`default_org_id` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `memberships` (
	`id` text PRIMARY KEY NOT NULL,
	`user_id` text NOT NULL,
	`level` text NOT NULL,
	`scope_id` text NOT NULL,
	`owner_org_id` text NOT NULL,
	`project_id` text,
	`roles` text NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `memberships_user_scope` ON `memberships` (`user_id`,`level`,`scope_id`);--> statement-breakpoint
CREATE INDEX `memberships_scope` ON `memberships` (`level`,`scope_id`);--> statement-breakpoint
CREATE TABLE `organizations` (
	`id` text PRIMARY KEY NOT NULL,
	`instance_id` text NOT NULL,
	`name` text NOT NULL,
	`name_key` text NOT NULL,
	FOREIGN KEY (`instance_id`) REFERENCES `instances`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `organizations_name_key` ON `organizations` (`instance_id`,`name_key`);--> statement-breakpoint
CREATE TABLE `personal_access_tokens` (
	`id` text PRIMARY KEY NOT NULL,
	`user_id` text NOT NULL,
	`secret_hash` text NOT NULL,
	`expires_at` integer,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `users` (
	`id` text PRIMARY KEY NOT NULL,
	`instance_id` text NOT NULL,
	`org_id` text NOT NULL,
	`type` text NOT NULL,
	`state` text NOT NULL,
	`user_name` text NOT NULL,
	`user_name_key` text NOT NULL,
	`machine_name` text,
	`machine_description` text,
	FOREIGN KEY (`org_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `users_user_name_key` ON `users` (`instance_id`,`user_name_key`);--> statement-breakpoint
CREATE INDEX `users_org` ON `users` (`org_id`,`id`);