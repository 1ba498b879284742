DROP INDEX `users_org`;--> statement-breakpoint
CREATE INDEX `users_org` ON `users` (`org_id`);