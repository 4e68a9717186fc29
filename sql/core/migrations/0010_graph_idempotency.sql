-- Graph writes sent with an Idempotency-Key: the first answer is kept for
-- 24 hours and returned again for the same key from the same app. A row
-- without a response marks a request still in flight.
CREATE TABLE core.idempotency_keys (
    scope        text        NOT NULL,
    key          text        NOT NULL,
    request_hash bytea       NOT NULL,
    status       integer,
    response     bytea,
    created_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (scope, key)
);

CREATE INDEX idempotency_keys_created_at ON core.idempotency_keys (created_at);
