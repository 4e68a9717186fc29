-- Issue 31 item 4: the data use checkup (CONTRACT §17). A live app's team
-- Admin certifies once a year how the app uses each approved scope; past
-- the due time the app's tokens and key keep only public_profile until
-- then. One row an app that has a checkup: written when the app goes live
-- (due a year later), moved a year on by each certification, or set by the
-- operator. A development app has none.
CREATE TABLE core.app_data_use_checkups (
    app_id       bigint      PRIMARY KEY REFERENCES core.apps (id) ON DELETE CASCADE,
    due_at       timestamptz NOT NULL,
    -- The last certification: when, by whom, and what the Admin wrote for
    -- each approved scope ({"<scope>": "<how the app uses it>"}).
    certified_at timestamptz,
    certified_by bigint      REFERENCES core.users (id) ON DELETE SET NULL,
    uses         jsonb       NOT NULL DEFAULT '{}',
    -- The due time whose reminder (the app.data_use_checkup.due event) was
    -- written: one reminder per due period, however many gateways look.
    reminded_for timestamptz
);

-- The reminder job reads the checkups whose reminder is owed, by due time.
CREATE INDEX app_data_use_checkups_unreminded ON core.app_data_use_checkups (due_at)
    WHERE reminded_for IS DISTINCT FROM due_at;

-- Apps live before the checkup existed are due a year from now.
INSERT INTO core.app_data_use_checkups (app_id, due_at)
SELECT id, now() + interval '1 year' FROM core.apps WHERE mode = 'live';
