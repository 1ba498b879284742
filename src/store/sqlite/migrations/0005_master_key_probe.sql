CREATE TABLE `master_key_probe` (
	`id` integer PRIMARY KEY NOT NULL,
	`sealed` text NOT NULL
);
