-- A person's sessions and keys are found by their user: leaving lists them
-- for the caches to forget, and deleting a user cascades to them. Both read
-- the whole of core.credentials before. Only credentials outside any grant
-- have owner_user_id (0265), so a code exchange adds no entry here; a
-- grant's tokens are found through the grant (credentials_grant_idx).
CREATE INDEX credentials_owner_user_idx ON core.credentials (owner_user_id)
    WHERE owner_user_id IS NOT NULL;
