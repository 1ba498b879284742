CREATE TABLE `smtp_configs` (
	`instance_id` text PRIMARY KEY NOT NULL,
	`sender_address` text NOT NULL,
	`sender_name` text NOT NULL,
	`tls` integer NOT NULL,
	`host` text NOT NULL,
	`user` text NOT NULL,
	`password_sealed` text
);
--> statement-breakpoint
ALTER TABLE `outbox` ADD `copied_at` integer;