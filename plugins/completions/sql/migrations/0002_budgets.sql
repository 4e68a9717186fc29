-- Usage written exactly once: every batch the recorder writes carries an
-- id, inserted in the same statement as the counts it adds. A batch
-- retried after a failure whose outcome was unknown (the commit happened,
-- the answer was lost) finds its id already there and adds nothing.
CREATE TABLE completions.usage_batches (
    id         text        PRIMARY KEY,
    written_at timestamptz NOT NULL DEFAULT now()
);

-- An app's own budget and rate limit, set on app/<id>/completions_budget.
-- A null column keeps the gateway's configured default; 0 means no limit.
CREATE TABLE completions.budgets (
    app_id              text        PRIMARY KEY,
    monthly_tokens      bigint      CHECK (monthly_tokens >= 0),
    requests_per_minute bigint      CHECK (requests_per_minute >= 0),
    updated_at          timestamptz NOT NULL DEFAULT now()
);

-- The shared counters of budgets and rate limits. Each gateway's plugin
-- leases a slice of a window (a month of tokens, a minute of requests)
-- from its row and spends it locally, so that every gateway on this
-- database enforces one limit without a round trip per request: granted
-- never passes the limit in force when the slice was taken.
CREATE TABLE completions.quota_leases (
    app_id       text        NOT NULL,
    -- "tokens" (monthly budget) or "requests" (per minute).
    kind         text        NOT NULL CHECK (kind IN ('tokens', 'requests')),
    window_start timestamptz NOT NULL,
    granted      bigint      NOT NULL,
    -- What the last lease granted, so that a lease answers its own grant.
    last_grant   bigint      NOT NULL,
    PRIMARY KEY (app_id, kind, window_start)
);
