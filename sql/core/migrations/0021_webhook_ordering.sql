-- Issue 18: ordered delivery per key, held deliveries, endpoints slowed by
-- Retry-After (CONTRACT §14).

-- An event may name an ordering key (svcchat: its conversation). Events of
-- one key are numbered by seq in the order their producer committed them:
-- the producer serialises them (svcchat under the conversation's row lock).
ALTER TABLE core.outbox ADD COLUMN ordering_key text;
-- "Is an older event of this key still undispatched?", asked by the claim.
CREATE INDEX outbox_pending_ordered ON core.outbox (ordering_key, seq)
    WHERE dispatched_at IS NULL AND ordering_key IS NOT NULL;

ALTER TABLE core.webhook_subscriptions
    -- conversation: the events of one ordering key go to this app one at a
    -- time, in seq order; none: in parallel.
    ADD COLUMN ordering     text NOT NULL DEFAULT 'none' CHECK (ordering IN ('none', 'conversation')),
    -- The endpoint answered 429 or 503 with Retry-After: nothing is sent to
    -- it before this time.
    ADD COLUMN paused_until timestamptz;

-- held: kept, not sent, because the endpoint was disabled; a replay of the
-- time range sends it.
ALTER TABLE core.webhook_deliveries DROP CONSTRAINT webhook_deliveries_status_check;
ALTER TABLE core.webhook_deliveries ADD CONSTRAINT webhook_deliveries_status_check
    CHECK (status IN ('pending', 'succeeded', 'failed', 'held'));
ALTER TABLE core.webhook_deliveries
    -- Set on deliveries of an ordered subscription: the event's key and
    -- outbox seq.
    ADD COLUMN ordering_key text,
    ADD COLUMN ordering_seq bigint;
-- "Is an older delivery of this key still pending for this app?"
CREATE INDEX webhook_deliveries_ordered ON core.webhook_deliveries (app_id, ordering_key, ordering_seq)
    WHERE status = 'pending' AND ordering_key IS NOT NULL;
-- The replay of a time range looks at failed and held deliveries only.
CREATE INDEX webhook_deliveries_replayable ON core.webhook_deliveries (app_id, event_created_at)
    WHERE status IN ('failed', 'held');

-- A Page's default expires_in for svcchat's take and pass (seconds, 60 to
-- 86,400); NULL: handovers do not expire unless the call says so.
ALTER TABLE core.pages ADD COLUMN handover_timeout integer
    CHECK (handover_timeout BETWEEN 60 AND 86400);
