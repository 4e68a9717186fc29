-- Pruning keeps the core tables bounded (gateway/internal/prune). Each
-- statement removes at most @batch rows, oldest first, so that no round
-- holds locks for long; the pruner repeats it until less than a batch goes.

-- name: PruneOutbox :execrows
-- Events dispatched (fanned out to deliveries; no longer queued in
-- core.outbox_pending) and older than the retention: appended then, or
-- dispatched then for the rows dispatched before migration 0267.
DELETE FROM core.outbox WHERE seq IN (
    SELECT o.seq FROM core.outbox o
    WHERE COALESCE(o.dispatched_at, o.created_at) < now() - make_interval(secs => @retain_seconds::float8)
      AND NOT EXISTS (SELECT 1 FROM core.outbox_pending p WHERE p.seq = o.seq)
    ORDER BY o.seq LIMIT @batch);

-- name: PruneDeliveries :execrows
-- Finished deliveries (succeeded or given up) older than the retention,
-- attempt log included; pending and held ones stay whatever their age.
DELETE FROM core.webhook_deliveries WHERE seq IN (
    SELECT seq FROM core.webhook_deliveries
    WHERE completed_at < now() - make_interval(secs => @retain_seconds::float8)
    ORDER BY seq LIMIT @batch);

-- name: PruneIdempotencyKeysBatch :execrows
DELETE FROM core.idempotency_keys WHERE (scope, key) IN (
    SELECT scope, key FROM core.idempotency_keys
    WHERE created_at < now() - make_interval(secs => @retain_seconds::float8)
    LIMIT @batch);

-- name: PruneCredentials :execrows
-- Tokens and sessions a day past their expiry or revocation: a day's grace
-- so that a late caller still hears "expired" or "revoked", not "unknown".
DELETE FROM core.credentials WHERE token_hash IN (
    SELECT token_hash FROM core.credentials
    WHERE expires_at < now() - interval '1 day' OR revoked_at < now() - interval '1 day'
    LIMIT @batch);

-- name: PruneOAuthCodes :execrows
-- Codes a day past their ten minutes (kept that long so that a second use is
-- recognised and revokes what the first issued).
DELETE FROM core.oauth_codes WHERE code_hash IN (
    SELECT code_hash FROM core.oauth_codes WHERE expires_at < now() - interval '1 day' LIMIT @batch);

-- name: PruneRefreshTokens :execrows
-- Refresh tokens a day past their expiry. Used and revoked ones are kept
-- until then: a reused one must be recognised to revoke its family.
DELETE FROM core.oauth_refresh_tokens WHERE token_hash IN (
    SELECT token_hash FROM core.oauth_refresh_tokens WHERE expires_at < now() - interval '1 day' LIMIT @batch);
