-- A person's control over their data (CONTRACT §16): the apps they
-- authorized, removing one, the apps' data deletion callbacks, leaving.

-- name: ListAuthorizedApps :many
-- The apps the user authorized: a remembered consent, or a grant not
-- revoked (a development token, a code authorized without remembering),
-- with the union of their scopes and the latest time one was granted.
SELECT a.id, a.name,
       ARRAY(SELECT DISTINCT s FROM unnest(x.scopes) AS s ORDER BY s)::text[] AS scopes,
       x.granted_at::timestamptz AS granted_at,
       (oc.page_ids IS NOT NULL)::boolean AS pages_chosen, COALESCE(oc.page_ids, '{}')::bigint[] AS page_ids
FROM (
    SELECT u.app_id, array_agg(u.scope) AS scopes, max(u.at) AS granted_at
    FROM (
        SELECT c.app_id, unnest(c.scopes) AS scope, c.updated_at AS at
        FROM core.oauth_consents c WHERE c.user_id = @user_id
        UNION ALL
        SELECT g.app_id, unnest(g.scopes) AS scope, g.created_at AS at
        FROM core.oauth_grants g WHERE g.user_id = @user_id AND g.revoked_at IS NULL
    ) u
    GROUP BY u.app_id
) x
JOIN core.apps a ON a.id = x.app_id
LEFT JOIN core.oauth_consents oc ON oc.user_id = @user_id AND oc.app_id = x.app_id
ORDER BY x.granted_at DESC, a.id;

-- name: DeleteConsent :execrows
DELETE FROM core.oauth_consents WHERE user_id = @user_id AND app_id = @app_id;

-- name: RevokeUserAppGrants :many
-- Revokes every grant of the user to the app; a code not yet redeemed is
-- then refused (RedeemCode) and a refresh token too (LockRefreshToken).
UPDATE core.oauth_grants SET revoked_at = now()
WHERE user_id = @user_id AND app_id = @app_id AND revoked_at IS NULL
RETURNING id;

-- name: RevokeGrantsCredentials :many
-- Revokes the access tokens of the grants; returns their hashes so that
-- caches can forget them.
UPDATE core.credentials SET revoked_at = now()
WHERE grant_id = ANY(@grant_ids::bigint[]) AND revoked_at IS NULL
RETURNING token_hash;

-- name: RevokeGrantsRefreshTokens :execrows
UPDATE core.oauth_refresh_tokens SET revoked_at = now()
WHERE grant_id = ANY(@grant_ids::bigint[]) AND revoked_at IS NULL;

-- name: SetDataDeletionCallbackURL :exec
INSERT INTO core.app_deletion_callbacks (app_id, url) VALUES (@app_id, @url)
ON CONFLICT (app_id) DO UPDATE SET url = excluded.url;

-- name: DeleteDataDeletionCallbackURL :exec
DELETE FROM core.app_deletion_callbacks WHERE app_id = @app_id;

-- name: RequestDataDeletion :execrows
-- Starts the data deletion callback of each app that names one, for the
-- user; apps without a callback URL are not called.
INSERT INTO core.data_deletion_requests (app_id, user_id)
SELECT c.app_id, @user_id::bigint FROM core.app_deletion_callbacks c
WHERE c.app_id = ANY(@app_ids::bigint[]);

-- name: ListDataDeletionRequests :many
SELECT app_id, status, confirmation_code, url, requested_at
FROM core.data_deletion_requests
WHERE user_id = @user_id
ORDER BY requested_at DESC, id DESC
LIMIT 100;

-- name: ClaimDataDeletionRequests :many
-- Leases due requests to this gateway (SKIP LOCKED: two gateways never
-- take one), with what the attempt needs: the app's callback URL, mode
-- and sealed client secret.
WITH due AS (
    SELECT r.id FROM core.data_deletion_requests r
    WHERE r.status = 'pending' AND r.next_attempt_at <= now()
      AND (r.lease_until IS NULL OR r.lease_until < now())
    ORDER BY r.next_attempt_at
    LIMIT @max_rows
    FOR UPDATE SKIP LOCKED
)
UPDATE core.data_deletion_requests r
SET lease_token = @lease_token, lease_until = now() + make_interval(secs => @lease_seconds::float8)
FROM due, core.apps a
WHERE r.id = due.id AND a.id = r.app_id
RETURNING r.id, r.app_id, r.user_id, r.attempts, a.mode, a.client_secret_sealed,
          COALESCE((SELECT c.url FROM core.app_deletion_callbacks c WHERE c.app_id = r.app_id), '')::text AS callback_url;

-- name: ConfirmDataDeletionRequest :execrows
UPDATE core.data_deletion_requests
SET status = 'confirmed', url = @url, confirmation_code = @confirmation_code, attempts = attempts + 1,
    last_error = '', lease_token = NULL, lease_until = NULL
WHERE id = @id AND lease_token = @lease_token;

-- name: FailDataDeletionAttempt :execrows
-- Records a failed attempt: retried at next_attempt_at, or failed for good
-- when there is none.
UPDATE core.data_deletion_requests
SET status = CASE WHEN sqlc.narg('next_attempt_at')::timestamptz IS NULL THEN 'failed' ELSE 'pending' END,
    next_attempt_at = COALESCE(sqlc.narg('next_attempt_at')::timestamptz, next_attempt_at),
    attempts = attempts + 1, last_error = @last_error, lease_token = NULL, lease_until = NULL
WHERE id = @id AND lease_token = @lease_token;

-- name: LeavingUserCredentials :many
-- The hashes of the user's live bearer credentials (sessions, user
-- tokens), for caches to forget once the user has left.
-- Sessions and keys by their owner, a grant's tokens through the grant.
SELECT c.token_hash FROM core.credentials c
WHERE c.owner_user_id = @user_id AND c.revoked_at IS NULL
UNION ALL
SELECT c.token_hash FROM core.oauth_grants g
JOIN core.credentials c ON c.grant_id = g.id
WHERE g.user_id = @user_id AND c.revoked_at IS NULL;

-- name: LeavingUserApps :many
-- The apps the user authorized, by consent or by any grant.
SELECT c.app_id FROM core.oauth_consents c WHERE c.user_id = @user_id
UNION
SELECT g.app_id FROM core.oauth_grants g WHERE g.user_id = @user_id;

-- name: UnpublishSolelyOwnedPages :many
-- Unpublishes the Pages the user is the only owner of, answering their ids.
UPDATE core.pages p SET published = false
WHERE p.id IN (
    SELECT r.page_id FROM core.page_roles r
    WHERE r.user_id = @user_id AND r.role = 'owner'
      AND NOT EXISTS (SELECT 1 FROM core.page_roles o
                      WHERE o.page_id = r.page_id AND o.role = 'owner' AND o.user_id <> r.user_id)
)
RETURNING p.id;

-- name: StartUserLeftJobs :execrows
INSERT INTO core.user_left_jobs (plugin, user_id)
SELECT unnest(@plugins::text[]), @user_id::bigint
ON CONFLICT (plugin, user_id) DO NOTHING;

-- name: DeleteUser :execrows
-- Deletes the users row: what references it goes with it (ON DELETE).
DELETE FROM core.users WHERE id = @user_id;

-- name: ClaimUserLeftJobs :many
-- Leases due jobs to this gateway (SKIP LOCKED: two gateways never take
-- one).
WITH due AS (
    SELECT j.id FROM core.user_left_jobs j
    WHERE j.next_attempt_at <= now() AND (j.lease_until IS NULL OR j.lease_until < now())
    ORDER BY j.next_attempt_at
    LIMIT @max_rows
    FOR UPDATE SKIP LOCKED
)
UPDATE core.user_left_jobs j
SET lease_token = @lease_token, lease_until = now() + make_interval(secs => @lease_seconds::float8)
FROM due
WHERE j.id = due.id
RETURNING j.id, j.plugin, j.user_id, j.attempts;

-- name: FinishUserLeftJob :execrows
DELETE FROM core.user_left_jobs WHERE id = @id AND lease_token = @lease_token;

-- name: RetryUserLeftJob :execrows
UPDATE core.user_left_jobs
SET next_attempt_at = @next_attempt_at, attempts = attempts + 1, last_error = @last_error,
    lease_token = NULL, lease_until = NULL
WHERE id = @id AND lease_token = @lease_token;

-- The core's own user-left job (gateway/internal/leaving, CoreJob): the
-- events about the person who left and their deliveries go, a batch at a
-- time, the outbox first (a statement that waits for a dispatcher's
-- lock on an event's queue entry then lets the next one see the
-- deliveries it made).

-- name: EraseUserEvents :execrows
-- The person's undispatched events leave the dispatch queue too (all of
-- them: the queue is short), waiting for a dispatcher that holds one.
WITH unqueued AS (
    DELETE FROM core.outbox_pending p USING core.outbox o
    WHERE o.seq = p.seq AND o.user_id = @user_id::text
)
DELETE FROM core.outbox WHERE seq IN (
    SELECT seq FROM core.outbox WHERE user_id = @user_id::text LIMIT @batch);

-- name: EraseUserDeliveries :execrows
DELETE FROM core.webhook_deliveries WHERE seq IN (
    SELECT seq FROM core.webhook_deliveries WHERE user_id = @user_id::text LIMIT @batch);

-- name: EraseFinishedDataDeletionRequests :execrows
-- The person's data deletion callbacks that are over (confirmed or failed):
-- no one can read them once the person has left.
DELETE FROM core.data_deletion_requests WHERE user_id = @user_id AND status <> 'pending';

-- name: UserLeftWorkRemaining :one
-- Whether anything else of the person's leaving is still under way: a
-- plugin's job (whose plugin may emit events until it has erased them) or
-- a data deletion callback still pending (whose attempts need the user id).
SELECT (EXISTS (SELECT 1 FROM core.user_left_jobs j WHERE j.user_id = @user_id AND j.plugin <> @core_job::text)
        OR EXISTS (SELECT 1 FROM core.data_deletion_requests r WHERE r.user_id = @user_id AND r.status = 'pending'))::boolean AS busy;

-- name: ChooseConsentPages :exec
-- Changes the Pages the person chose for the app (granular consent,
-- CONTRACT §17) without revoking anything: every token of the app follows
-- the consent (page_ids NULL: every Page). A consent is made for an app
-- authorized only by grants.
INSERT INTO core.oauth_consents (user_id, app_id, scopes, page_ids)
VALUES (@user_id, @app_id, '{}', sqlc.narg(page_ids)::bigint[])
ON CONFLICT (user_id, app_id) DO UPDATE SET page_ids = excluded.page_ids, updated_at = now();
