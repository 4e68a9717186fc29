-- The transactional outbox. Whoever changes state (the gateway or a plugin)
-- inserts the event here in the same transaction as the change, so an event
-- exists exactly when its change committed. The webhook dispatcher fans each
-- event out to the subscribed apps and marks it dispatched.
CREATE TABLE core.outbox (
    seq           bigserial   PRIMARY KEY,
    id            text        NOT NULL UNIQUE,
    type          text        NOT NULL,
    page_id       text,
    app_id        text,
    data          jsonb       NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now(),
    dispatched_at timestamptz
);

CREATE INDEX outbox_pending ON core.outbox (seq) WHERE dispatched_at IS NULL;

-- Wake the dispatcher as soon as an event commits.
CREATE FUNCTION core.outbox_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('svc_outbox', NEW.seq::text);
    RETURN NEW;
END;
$$;

CREATE TRIGGER outbox_notify AFTER INSERT ON core.outbox
    FOR EACH ROW EXECUTE FUNCTION core.outbox_notify();
