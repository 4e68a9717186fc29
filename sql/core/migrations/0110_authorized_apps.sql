-- The apps a user authorized (CONTRACT §16, me/authorized_apps) are read
-- and revoked by user: grants get an index by user, as consents have one
-- (their primary key).
CREATE INDEX oauth_grants_user_idx ON core.oauth_grants (user_id, app_id) WHERE user_id IS NOT NULL AND revoked_at IS NULL;
