CREATE TABLE `user_idp_links` (
	`user_id` text NOT NULL,
	`idp_id` text NOT NULL,
	`external_user_id` text NOT NULL,
	`display_name` text NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `user_idp_links_external` ON `user_idp_links` (`idp_id`,`external_user_id`);--> statement-breakpoint
CREATE INDEX `user_idp_links_user` ON `user_idp_links` (`user_id`);--> statement-breakpoint
CREATE TABLE `one_time_codes` (
	`id` text PRIMARY KEY NOT NULL,
	`user_id` text NOT NULL,
	`kind` text NOT NULL,
	`digest` text NOT NULL,
	`expires_at` integer NOT NULL,
	`attempts` integer NOT NULL,
	`used_at` integer,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `one_time_codes_user_kind` ON `one_time_codes` (`user_id`,`kind`);--> statement-breakpoint
CREATE TABLE `outbox` (
	`id` text PRIMARY KEY NOT NULL,
	`instance_id` text NOT NULL,
	`template` text NOT NULL,
	`recipient` text NOT NULL,
	`message_sealed` text NOT NULL,
	`status` text NOT NULL,
	`attempts` integer NOT NULL,
	`next_attempt_at` integer NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `outbox_due` ON `outbox` (`status`,`next_attempt_at`);--> statement-breakpoint
CREATE TABLE `password_policies` (
	`instance_id` text PRIMARY KEY NOT NULL,
	`min_length` integer NOT NULL,
	`require_uppercase` integer NOT NULL,
	`require_lowercase` integer NOT NULL,
	`require_digit` integer NOT NULL,
	`require_symbol` integer NOT NULL
);
--> statement-breakpoint
ALTER TABLE `users` ADD `first_name` text;--> statement-breakpoint
ALTER TABLE `users` ADD `last_name` text;--> statement-breakpoint
ALTER TABLE `users` ADD `nick_name` text;--> statement-breakpoint
ALTER TABLE `users` ADD `display_name` text;--> statement-breakpoint
ALTER TABLE `users` ADD `preferred_language` text;--> statement-breakpoint
ALTER TABLE `users` ADD `gender` integer;--> statement-breakpoint
ALTER TABLE `users` ADD `email` text;--> statement-breakpoint
ALTER TABLE `users` ADD `email_key` text;--> statement-breakpoint
ALTER TABLE `users` ADD `email_verified` integer;--> statement-breakpoint
ALTER TABLE `users` ADD `phone` text;--> statement-breakpoint
ALTER TABLE `users` ADD `phone_verified` integer;--> statement-breakpoint
ALTER TABLE `users` ADD `password_hash` text;--> statement-breakpoint
ALTER TABLE `users` ADD `password_change_required` integer;--> statement-breakpoint
ALTER TABLE `users` ADD `otp_secret_sealed` text;--> statement-breakpoint
CREATE INDEX `users_email` ON `users` (`instance_id`,`email_key`);