-- Issue 34 item 3: dispatching an event no longer writes its outbox row.
--
-- Until now the dispatcher locked each event (FOR UPDATE) and set
-- dispatched_at. That update was never HOT (the pending indexes' predicates
-- name the column): every event got a second full copy of its row, at the
-- table's end where the producers append, and two new index entries; it was
-- most of a dispatch's cost when no app subscribes (auto_explain: 3 of 5 ms
-- for 28 events).
--
-- An undispatched event is now a row of core.outbox_pending, made by a
-- trigger in the transaction that appends the event (so it exists exactly
-- when the event committed), and the dispatch deletes it: a delete writes
-- no new row version and no index entry. The outbox rows stay as they were
-- written; dispatched_at is no longer set (rows dispatched before this
-- migration keep theirs). An event appended with dispatched_at already set
-- is not queued.
DROP INDEX core.outbox_pending;
DROP INDEX core.outbox_pending_ordered;

CREATE TABLE core.outbox_pending (
    seq          bigint PRIMARY KEY,
    -- The event's ordering key: "is an older event of this key still
    -- undispatched?", asked by the claim of an ordered delivery.
    ordering_key text
);
CREATE INDEX outbox_pending_ordered ON core.outbox_pending (ordering_key, seq) WHERE ordering_key IS NOT NULL;

-- SECURITY DEFINER: the plugins' roles may insert into core.outbox and do
-- nothing else in core; the queue entry is the outbox's own bookkeeping.
CREATE FUNCTION core.outbox_enqueue() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    INSERT INTO core.outbox_pending (seq, ordering_key) VALUES (NEW.seq, NEW.ordering_key);
    RETURN NULL;
END;
$$;
REVOKE ALL ON FUNCTION core.outbox_enqueue() FROM PUBLIC;

CREATE TRIGGER outbox_enqueue AFTER INSERT ON core.outbox
    FOR EACH ROW WHEN (NEW.dispatched_at IS NULL) EXECUTE FUNCTION core.outbox_enqueue();

INSERT INTO core.outbox_pending (seq, ordering_key)
SELECT seq, ordering_key FROM core.outbox WHERE dispatched_at IS NULL;
