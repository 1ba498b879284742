ALTER TABLE `users` ADD `external_id` text;--> statement-breakpoint
CREATE UNIQUE INDEX `users_external_id` ON `users` (`org_id`,`external_id`);