CREATE TABLE `applications` (
	`id` text PRIMARY KEY NOT NULL,
	`project_id` text NOT NULL,
	`name` text NOT NULL,
	`name_key` text NOT NULL,
	`type` text NOT NULL,
	`client_id` text,
	`client_secret_hash` text,
	`settings` text NOT NULL,
	FOREIGN KEY (`project_id`) REFERENCES `projects`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `applications_name_key` ON `applications` (`project_id`,`name_key`);--> statement-breakpoint
CREATE UNIQUE INDEX `applications_client_id` ON `applications` (`client_id`);--> statement-breakpoint
CREATE TABLE `identity_providers` (
	`id` text PRIMARY KEY NOT NULL,
	`instance_id` text NOT NULL,
	`org_id` text,
	`owner_id` text NOT NULL,
	`name` text NOT NULL,
	`name_key` text NOT NULL,
	`issuer` text NOT NULL,
	`client_id` text NOT NULL,
	`client_secret_sealed` text NOT NULL,
	`scopes` text NOT NULL,
	`styling_type` integer NOT NULL,
	`auto_register` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `identity_providers_name_key` ON `identity_providers` (`owner_id`,`name_key`);--> statement-breakpoint
CREATE TABLE `project_grants` (
	`id` text PRIMARY KEY NOT NULL,
	`project_id` text NOT NULL,
	`granted_org_id` text NOT NULL,
	`role_keys` text NOT NULL,
	FOREIGN KEY (`project_id`) REFERENCES `projects`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`granted_org_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `project_grants_project_org` ON `project_grants` (`project_id`,`granted_org_id`);--> statement-breakpoint
CREATE TABLE `project_roles` (
	`project_id` text NOT NULL,
	`role_key` text NOT NULL,
	`display_name` text NOT NULL,
	PRIMARY KEY(`project_id`, `role_key`),
	FOREIGN KEY (`project_id`) REFERENCES `projects`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `projects` (
	`id` text PRIMARY KEY NOT NULL,
	`instance_id` text NOT NULL,
	`org_id` text NOT NULL,
	`name` text NOT NULL,
	`name_key` text NOT NULL,
	FOREIGN KEY (`org_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `projects_name_key` ON `projects` (`org_id`,`name_key`);