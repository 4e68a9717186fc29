-- The app lifecycle through the Graph (issue #14 item 1): key rotation with
-- a 24-hour overlap, Test Users created for one app, and App Review with an
-- automated state of its own and the submission kept for staff.

-- A rotated client secret keeps working until previous_secret_expires_at
-- (stored as a SHA-256 hash, like the current one). The client secret also
-- signs webhooks, so it must be readable: client_secret_sealed and
-- previous_secret_sealed hold it sealed with AES-256-GCM under the
-- installation's master key (package secretbox), bound to the app id.
ALTER TABLE core.apps
    ADD COLUMN previous_secret_hash       bytea,
    ADD COLUMN previous_secret_expires_at timestamptz,
    ADD COLUMN client_secret_sealed       bytea,
    ADD COLUMN previous_secret_sealed     bytea;

-- A Test User made for one app (app/<id>/test_users): deleted with the app,
-- or when the app removes it.
ALTER TABLE core.users
    ADD COLUMN test_user_of bigint REFERENCES core.apps (id) ON DELETE CASCADE;

-- automated_approved: a basic scope the automated review passed (score at or
-- above 85); approved is a staff decision. The submission (use case, privacy
-- policy URL) is kept for staff to read.
ALTER TABLE core.app_scope_reviews
    DROP CONSTRAINT app_scope_reviews_status_check,
    ADD CONSTRAINT app_scope_reviews_status_check
        CHECK (status IN ('pending', 'automated_approved', 'approved', 'rejected')),
    ADD COLUMN use_case           text NOT NULL DEFAULT '',
    ADD COLUMN privacy_policy_url text NOT NULL DEFAULT '';

-- A Graph write's kept answer (Idempotency-Key) may carry a secret shown
-- once (a rotated key, a Test User's password, a new app's client secret):
-- it is kept sealed under the master key (package graph).
ALTER TABLE core.idempotency_keys
    ADD COLUMN sealed boolean NOT NULL DEFAULT false;
