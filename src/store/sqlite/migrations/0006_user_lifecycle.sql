ALTER TABLE `users` ADD `inactive` integer DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE `users` ADD `locked` integer DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE `outbox` ADD `user_id` text REFERENCES users(id) ON DELETE cascade;--> statement-breakpoint
CREATE INDEX `outbox_user` ON `outbox` (`user_id`);--> statement-breakpoint
-- Mails queued before this migration: each was queued with a `user.notification.queued` event of its user naming it.
UPDATE `outbox` SET `user_id` = `queued`.`user_id`
FROM (SELECT json_extract(`payload`, '$.outboxId') AS `outbox_id`, `aggregate_id` AS `user_id` FROM `events`
      WHERE `aggregate_type` = 'user' AND `type` = 'user.notification.queued') AS `queued`
WHERE `queued`.`outbox_id` = `outbox`.`id` AND `queued`.`user_id` IN (SELECT `id` FROM `users`);
