-- Leaving erases the person's events from the core too (CONTRACT §16,
-- docs/DECISIONS.md 2026-11-27): the outbox rows about them, delivered or
-- not, and the delivery log's rows of those events (attempts included),
-- in the core's own user-left job (gateway/internal/leaving).
--
-- An event names the person it is about (its subject, at most one) in
-- user_id, set when it is appended (sdk/event.Event.UserID), as text like
-- page_id and app_id; NULL when it is about no one (a Page's post, an app's
-- event). Deliveries copy it, as they copy the event, since they outlive
-- the outbox row. The partial indexes cost an append of an event about no
-- one nothing, and one about a person one small btree entry.
ALTER TABLE core.outbox ADD COLUMN user_id text;
CREATE INDEX outbox_user ON core.outbox (user_id) WHERE user_id IS NOT NULL;

ALTER TABLE core.webhook_deliveries ADD COLUMN user_id text;
CREATE INDEX webhook_deliveries_user ON core.webhook_deliveries (user_id) WHERE user_id IS NOT NULL;
