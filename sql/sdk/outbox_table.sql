-- What a plugin may write into the gateway's outbox, declared for sqlc only
-- (never run: the gateway's migrations own core.outbox). A plugin whose hot
-- path writes its change and the event in one statement (a data-modifying
-- WITH, one round trip and atomic without BEGIN and COMMIT) lists this file
-- in its sqlc schema. Keep it in step with sql/core/migrations; the
-- plugin's database tests insert through it.
CREATE SCHEMA IF NOT EXISTS core;

CREATE TABLE core.outbox (
    seq          bigserial PRIMARY KEY,
    id           text      NOT NULL UNIQUE,
    type         text      NOT NULL,
    page_id      text,
    app_id       text,
    data         jsonb     NOT NULL,
    ordering_key text,
    user_id      text
);
