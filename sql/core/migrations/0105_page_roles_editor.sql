-- Pages made by people (issue 30, CONTRACT §16): a Page has a category and
-- the user who created it, counted against the Pages one person may create
-- (identity.MaxPagesPerUser); page roles gain 'editor', who may post and
-- reply in the Page's threads but change nothing of the Page.
ALTER TABLE core.pages
    ADD COLUMN category   text   NOT NULL DEFAULT '',
    ADD COLUMN created_by bigint REFERENCES core.users (id) ON DELETE SET NULL;
CREATE INDEX pages_created_by_idx ON core.pages (created_by) WHERE created_by IS NOT NULL;

ALTER TABLE core.page_roles DROP CONSTRAINT page_roles_role_check;
ALTER TABLE core.page_roles ADD CONSTRAINT page_roles_role_check CHECK (role IN ('owner', 'admin', 'editor'));
