-- Leaving (CONTRACT §16): a person's users row is deleted, so that signing
-- in again fails as for an unknown user; what pointed at it goes with it
-- (sessions, tokens, grants, consents, roles), and what is not theirs but
-- names them as a reviewer forgets who.
ALTER TABLE core.app_scope_reviews
    DROP CONSTRAINT app_scope_reviews_reviewer_id_fkey,
    ADD CONSTRAINT app_scope_reviews_reviewer_id_fkey
        FOREIGN KEY (reviewer_id) REFERENCES core.users (id) ON DELETE SET NULL;

-- One job per plugin that declares the user-left hook (sdk.OnUserLeft),
-- written in the transaction that deletes the person: the gateway calls
-- the plugin's handler through the host until it answers, claimed with a
-- lease by any gateway (as data deletion requests), then deletes the job.
CREATE TABLE core.user_left_jobs (
    id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    plugin          text        NOT NULL CHECK (plugin <> ''),
    -- No foreign key: the users row is gone.
    user_id         bigint      NOT NULL,
    attempts        integer     NOT NULL DEFAULT 0,
    next_attempt_at timestamptz NOT NULL DEFAULT now(),
    lease_token     bigint,
    lease_until     timestamptz,
    last_error      text        NOT NULL DEFAULT '',
    created_at      timestamptz NOT NULL DEFAULT now(),
    UNIQUE (plugin, user_id)
);
CREATE INDEX user_left_jobs_due_idx ON core.user_left_jobs (next_attempt_at);
