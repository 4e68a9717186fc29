-- Bounded self-service (issue 26, item 3): a user creates at most 50 apps,
-- counted by who created them rather than by team role, so handing an app's
-- Admin role to someone else does not free a place. Apps created before
-- this column have no creator and count for no one.
ALTER TABLE core.apps
    ADD COLUMN created_by bigint REFERENCES core.users (id) ON DELETE SET NULL;

CREATE INDEX apps_created_by ON core.apps (created_by) WHERE created_by IS NOT NULL;
