-- For sqlc only: the schemas the migration runner (sdk/migrate)
-- makes for our plugins before their first migration, which therefore do
-- not create them (a plugin's database role may not create schemas). sqlc
-- reads this file before each plugin's migrations.
CREATE SCHEMA book;
CREATE SCHEMA chat;
CREATE SCHEMA completions;
CREATE SCHEMA lenses;
CREATE SCHEMA social;
CREATE SCHEMA svcchat;
CREATE SCHEMA wearables;
CREATE SCHEMA ads;
CREATE SCHEMA commerce;
CREATE SCHEMA extmsg;
