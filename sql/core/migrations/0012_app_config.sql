-- An app's platformConfig: product settings the app's developers edit in the
-- console (for example platformConfig.svcchat.templates). Products read it
-- through the Graph (app/<id>/config), never from this table.
CREATE TABLE core.app_config (
    app_id          bigint      PRIMARY KEY REFERENCES core.apps (id) ON DELETE CASCADE,
    platform_config jsonb       NOT NULL DEFAULT '{}',
    updated_at      timestamptz NOT NULL DEFAULT now()
);
