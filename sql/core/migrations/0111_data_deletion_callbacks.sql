-- Data deletion callbacks (CONTRACT §16): an app may name a URL that the
-- platform calls with Meta's signed request when a person removes the app
-- or leaves. Each call is a durable row, claimed by any gateway with a
-- lease and retried on the webhooks' schedule, so that a restart loses
-- none.
-- The URL is a table of its own rather than a column of core.apps, whose
-- rows several queries read whole (RETURNING *).
CREATE TABLE core.app_deletion_callbacks (
    app_id bigint PRIMARY KEY REFERENCES core.apps (id) ON DELETE CASCADE,
    url    text NOT NULL CHECK (url <> '')
);

CREATE TABLE core.data_deletion_requests (
    id                bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    app_id            bigint      NOT NULL REFERENCES core.apps (id) ON DELETE CASCADE,
    -- No foreign key: the request outlives the person who left, whose
    -- users row is gone by the time the app is called.
    user_id           bigint      NOT NULL,
    status            text        NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'confirmed', 'failed')),
    -- What the app answered: where the person follows the deletion, and
    -- its code for it.
    url               text        NOT NULL DEFAULT '',
    confirmation_code text        NOT NULL DEFAULT '',
    attempts          integer     NOT NULL DEFAULT 0,
    next_attempt_at   timestamptz NOT NULL DEFAULT now(),
    -- The gateway attempting it, and until when (as webhook deliveries).
    lease_token       bigint,
    lease_until       timestamptz,
    last_error        text        NOT NULL DEFAULT '',
    requested_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX data_deletion_requests_due_idx ON core.data_deletion_requests (next_attempt_at) WHERE status = 'pending';
CREATE INDEX data_deletion_requests_user_idx ON core.data_deletion_requests (user_id, requested_at DESC);
