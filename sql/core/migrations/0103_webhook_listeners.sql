-- Issue 28 item 9: `gateway listen`. A listener is a developer's machine
-- that receives an app's deliveries over an outbound stream to a gateway,
-- in place of the app's endpoint, while it is connected (package webhook,
-- listen.go). Its row tells every gateway's dispatcher that the app is
-- listening, so that deliveries are made for it even when the app has no
-- subscription. The gateway holding the stream pushes expires_at forward
-- while the stream is open; a row past expires_at counts for nothing and
-- is deleted by the next listener of the app.
CREATE TABLE core.webhook_listeners (
    id         text PRIMARY KEY,
    app_id     bigint NOT NULL REFERENCES core.apps (id) ON DELETE CASCADE,
    -- Event types the listener asked for; empty: every event the app is
    -- entitled to.
    events     text[] NOT NULL DEFAULT '{}',
    expires_at timestamptz NOT NULL,
    -- Set when the stream closed: the row still counts for the dispatcher
    -- until expires_at (a short grace for a reconnection), but no longer
    -- toward the app's limit of listeners.
    ended_at   timestamptz,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX webhook_listeners_app ON core.webhook_listeners (app_id, expires_at);
