-- name: ClaimIdempotencyKey :one
-- Claims a key for a new request. An expired key is taken over, and so is a
-- claim of the same request that never got its answer within the claim
-- lease (its gateway died mid-request). Returns no row when the key is held
-- by a live claim or an answer.
INSERT INTO core.idempotency_keys (scope, key, request_hash)
VALUES (@scope, @key, @request_hash)
ON CONFLICT (scope, key) DO UPDATE
    SET request_hash = EXCLUDED.request_hash, status = NULL, response = NULL, sealed = false, created_at = now()
    WHERE core.idempotency_keys.created_at < now() - interval '24 hours'
       OR (core.idempotency_keys.status IS NULL
           AND core.idempotency_keys.request_hash = EXCLUDED.request_hash
           AND core.idempotency_keys.created_at < now() - make_interval(secs => @claim_lease_seconds::float8))
RETURNING created_at;

-- name: GetIdempotencyKey :one
SELECT request_hash, status, response, sealed, created_at
FROM core.idempotency_keys
WHERE scope = @scope AND key = @key;

-- name: StoreIdempotentResponse :exec
UPDATE core.idempotency_keys SET status = @status, response = @response, sealed = @sealed
WHERE scope = @scope AND key = @key;

-- name: ReleaseIdempotencyKey :exec
DELETE FROM core.idempotency_keys WHERE scope = @scope AND key = @key AND response IS NULL;

