-- The redemption locks its grant FOR SHARE (RedeemCode, RedeemCodes), so a
-- revocation (an UPDATE of revoked_at, which a foreign key's FOR KEY SHARE
-- check does not wait for) and a redemption are ordered: either the
-- revocation waits for the redemption and then revokes the tokens it issued,
-- or the redemption waits for the revocation and is refused. Before, a token
-- issued while its grant was being revoked outlived the revocation.
--
-- That lock is what the tokens' foreign keys to the grant took, so the keys
-- go: each was a query of its own per token (two per code, about 15 µs of
-- PostgreSQL a code in the serial redemption batch), and the lock alone, with
-- the keys, cost about 10 µs an exchange. Every path that issues a token from
-- a grant holds the grant's row lock (the redemption FOR SHARE, the refresh
-- rotation FOR UPDATE); the grant's deletion deletes its tokens below.
ALTER TABLE core.credentials DROP CONSTRAINT credentials_grant_id_fkey;
ALTER TABLE core.oauth_refresh_tokens DROP CONSTRAINT oauth_refresh_tokens_grant_id_fkey;

-- Tokens are deleted with their grant (the grant with its app or user). The
-- deletion waits for a redemption holding the grant, and each statement here
-- takes a new snapshot, so it reads what that redemption committed.
CREATE FUNCTION core.oauth_grant_tokens_deleted() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM core.credentials WHERE grant_id IN (SELECT id FROM gone);
    DELETE FROM core.oauth_refresh_tokens WHERE grant_id IN (SELECT id FROM gone);
    RETURN NULL;
END
$$;

CREATE TRIGGER oauth_grant_tokens_deleted AFTER DELETE ON core.oauth_grants
    REFERENCING OLD TABLE AS gone FOR EACH STATEMENT
    EXECUTE FUNCTION core.oauth_grant_tokens_deleted();
