-- Webhooks (issue #6, package gateway/internal/webhook).
--
-- The dispatcher turns each core.outbox event into one delivery per
-- subscribed app, in the transaction that marks the event dispatched.
-- Deliveries are claimed with FOR UPDATE SKIP LOCKED and leased: a claim
-- moves next_attempt_at past the lease and stamps lease_token, so no other
-- gateway claims the row while the attempt runs, a crashed gateway's rows
-- come back when the lease ends, and a late result from an expired lease
-- does not change the delivery's state (fencing). Every attempt is logged
-- in the delivery's attempts array.

-- The key webhook bodies are signed with: the app's client secret, which
-- identity keeps only hashed. It is sealed here with AES-256-GCM under the
-- installation's master key (package secretbox), bound to the app id.
CREATE TABLE core.webhook_app_secrets (
    app_id     bigint      PRIMARY KEY REFERENCES core.apps (id) ON DELETE CASCADE,
    sealed     bytea       NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now()
);

-- One endpoint per app (CONTRACT §6). The verify token is used once, when
-- saving, and is not kept.
CREATE TABLE core.webhook_subscriptions (
    app_id        bigint      PRIMARY KEY REFERENCES core.apps (id) ON DELETE CASCADE,
    callback_url  text        NOT NULL,
    events        text[]      NOT NULL,
    -- False once the endpoint failed every attempt for the failure window;
    -- saving the subscription again sets it back.
    active        boolean     NOT NULL DEFAULT true,
    -- Time of the first failed attempt since the last success; NULL while
    -- the endpoint is healthy.
    failing_since timestamptz,
    -- When the endpoint was disabled for failing: the console's flag.
    disabled_at   timestamptz,
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE core.webhook_deliveries (
    seq              bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    -- The public id, sent as X-Svc-Delivery on every attempt.
    id               text        NOT NULL UNIQUE
                                 DEFAULT ('whd_' || replace(gen_random_uuid()::text, '-', '')),
    app_id           bigint      NOT NULL REFERENCES core.apps (id) ON DELETE CASCADE,
    -- A copy of the event, so the delivery outlives the outbox row and every
    -- attempt sends the same body.
    event_id         text        NOT NULL,
    event_type       text        NOT NULL,
    page_id          text,
    event_created_at timestamptz NOT NULL,
    data             jsonb       NOT NULL,
    -- A console test event: sent whatever the event filter or the
    -- endpoint's state.
    test             boolean     NOT NULL DEFAULT false,
    replay_of        bigint      REFERENCES core.webhook_deliveries (seq) ON DELETE SET NULL,
    status           text        NOT NULL DEFAULT 'pending'
                                 CHECK (status IN ('pending', 'succeeded', 'failed')),
    -- Failed attempts so far: the position in the retry schedule.
    failed_attempts  integer     NOT NULL DEFAULT 0,
    -- While pending: when the next attempt is due, or when the current
    -- claim's lease ends.
    next_attempt_at  timestamptz,
    lease_token      bigint,
    -- The attempt log, oldest first: objects {"at", "status_code",
    -- "latency_ms", "error", "response_excerpt"} as the Graph shows them.
    -- A delivery has at most a dozen attempts, so they live in its row: one
    -- write records an outcome, one read lists a page of the log.
    attempts         jsonb       NOT NULL DEFAULT '[]',
    created_at       timestamptz NOT NULL DEFAULT now(),
    completed_at     timestamptz,
    CHECK ((status = 'pending') = (next_attempt_at IS NOT NULL))
);
CREATE INDEX webhook_deliveries_due ON core.webhook_deliveries (next_attempt_at) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_app ON core.webhook_deliveries (app_id, seq DESC);
