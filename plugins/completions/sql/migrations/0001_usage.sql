-- The migration runner makes the schema: the plugin's role owns it but may
-- not create schemas. An earlier text of this file made it too; a database
-- that applied that text is current:
-- migrate:replaces 477508cec4258d74de25e49b1ab451b1e1772194e31d9731fbbc39a9833736ba
-- Usage per app, model, upstream and day (UTC). Rows are added to by the
-- plugin's batched recorder, never per request: one upsert carries every
-- (app, model, upstream, day) seen since the last flush.

CREATE TABLE completions.usage (
    app_id            text   NOT NULL,
    day               date   NOT NULL,
    model             text   NOT NULL,
    -- The upstream that answered, or "svc-builtin".
    upstream          text   NOT NULL,
    requests          bigint NOT NULL DEFAULT 0,
    prompt_tokens     bigint NOT NULL DEFAULT 0,
    completion_tokens bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (app_id, day, model, upstream)
);
