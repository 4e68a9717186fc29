-- The OAuth 2.0 / OIDC authorization server (package oauth).

-- name: CreateGrant :one
INSERT INTO core.oauth_grants (app_id, user_id, scopes)
VALUES (@app_id, sqlc.narg('user_id'), @scopes)
RETURNING id;

-- name: InsertCode :exec
INSERT INTO core.oauth_codes (code_hash, grant_id, app_id, user_id, redirect_uri, scopes,
                              code_challenge, nonce, auth_time, expires_at)
VALUES (@code_hash, @grant_id, @app_id, @user_id, @redirect_uri, @scopes,
        @code_challenge, @nonce, @auth_time, @expires_at);

-- name: RedeemCode :one
-- Exchanges an authorization code in one statement: the code is marked used
-- only if it is unused, unexpired, issued to this client for this redirect
-- URI with this PKCE challenge, and its grant is not revoked; the access and
-- refresh tokens are inserted in the same statement. No row means refused;
-- the caller then asks GetCodeState why. The grant is locked FOR SHARE: a
-- revocation or deletion in flight is waited for and then seen, and one that
-- comes later waits for this statement's commit (migration 0269).
WITH g AS MATERIALIZED (
    SELECT g.id FROM core.oauth_grants g
    WHERE g.id = (SELECT c.grant_id FROM core.oauth_codes c WHERE c.code_hash = @code_hash)
      AND g.revoked_at IS NULL
    FOR SHARE OF g
), code AS (
    UPDATE core.oauth_codes c SET used_at = now()
    WHERE c.code_hash = @code_hash AND c.used_at IS NULL AND c.expires_at > now()
      AND c.app_id = @app_id AND c.redirect_uri = @redirect_uri AND c.code_challenge = @code_challenge
      AND c.grant_id IN (SELECT id FROM g)
    RETURNING c.grant_id, c.user_id, c.app_id, c.scopes, c.nonce, c.auth_time
), access_token AS (
    INSERT INTO core.credentials (token_hash, kind, app_id, user_id, scopes, grant_id, expires_at)
    SELECT @access_hash::bytea, 1, code.app_id, code.user_id, code.scopes, code.grant_id, @access_expires_at::timestamptz
    FROM code
), refresh_token AS (
    INSERT INTO core.oauth_refresh_tokens (token_hash, grant_id, app_id, user_id, scopes, expires_at)
    SELECT @refresh_hash::bytea, code.grant_id, code.app_id, code.user_id, code.scopes, @refresh_expires_at::timestamptz
    FROM code
)
SELECT code.grant_id, code.user_id, code.scopes, code.nonce, code.auth_time FROM code;

-- name: RedeemCodes :many
-- RedeemCode for several exchanges at once (oauth.redeemBatcher): one
-- statement and one commit for the exchanges that arrived while the
-- previous ones ran. Each input's ord (its index in the batch) comes back with its
-- row; an input without a row was refused, as RedeemCode's no row. A code
-- named twice in a batch is marked used once, so one of the two is refused.
-- The grants are locked FOR SHARE, as in RedeemCode.
WITH k AS MATERIALIZED (
    SELECT unnest(@ords::int[]) AS ord, unnest(@code_hashes::bytea[]) AS code_hash,
           unnest(@app_ids::bigint[]) AS app_id, unnest(@redirect_uris::text[]) AS redirect_uri,
           unnest(@code_challenges::text[]) AS code_challenge, unnest(@access_hashes::bytea[]) AS access_hash,
           unnest(@refresh_hashes::bytea[]) AS refresh_hash
), g AS MATERIALIZED (
    SELECT g.id FROM core.oauth_grants g
    WHERE g.id IN (SELECT c.grant_id FROM core.oauth_codes c WHERE c.code_hash IN (SELECT code_hash FROM k))
      AND g.revoked_at IS NULL
    FOR SHARE OF g
), code AS (
    UPDATE core.oauth_codes c SET used_at = now()
    FROM k
    WHERE c.code_hash = k.code_hash AND c.used_at IS NULL AND c.expires_at > now()
      AND c.app_id = k.app_id AND c.redirect_uri = k.redirect_uri AND c.code_challenge = k.code_challenge
      AND c.grant_id IN (SELECT id FROM g)
    RETURNING k.ord, k.access_hash, k.refresh_hash, c.grant_id, c.user_id, c.app_id, c.scopes, c.nonce, c.auth_time
), access_token AS (
    INSERT INTO core.credentials (token_hash, kind, app_id, user_id, scopes, grant_id, expires_at)
    SELECT code.access_hash, 1, code.app_id, code.user_id, code.scopes, code.grant_id, @access_expires_at::timestamptz
    FROM code
), refresh_token AS (
    INSERT INTO core.oauth_refresh_tokens (token_hash, grant_id, app_id, user_id, scopes, expires_at)
    SELECT code.refresh_hash, code.grant_id, code.app_id, code.user_id, code.scopes, @refresh_expires_at::timestamptz
    FROM code
)
SELECT code.ord::int AS ord, code.grant_id, code.user_id, code.scopes, code.nonce, code.auth_time FROM code;

-- name: GetCodeState :one
SELECT grant_id, app_id, used_at, expires_at FROM core.oauth_codes WHERE code_hash = @code_hash;

-- name: RevokeGrant :execrows
UPDATE core.oauth_grants SET revoked_at = now() WHERE id = @id AND revoked_at IS NULL;

-- name: RevokeGrantCredentials :many
-- Revokes every access token of a grant; returns their hashes so that
-- caches can forget them.
UPDATE core.credentials SET revoked_at = now()
WHERE grant_id = @grant_id AND revoked_at IS NULL
RETURNING token_hash;

-- name: RevokeGrantRefreshTokens :execrows
UPDATE core.oauth_refresh_tokens SET revoked_at = now()
WHERE grant_id = @grant_id AND revoked_at IS NULL;

-- name: LockRefreshToken :one
-- The refresh token and its grant, locked for rotation. Locking the grant
-- row serialises rotation against revocation of the family.
SELECT r.grant_id, r.app_id, r.user_id, r.scopes, r.expires_at, r.used_at, r.revoked_at,
       g.revoked_at AS grant_revoked_at
FROM core.oauth_refresh_tokens r JOIN core.oauth_grants g ON g.id = r.grant_id
WHERE r.token_hash = @token_hash
FOR UPDATE OF r, g;

-- name: GetRefreshToken :one
SELECT r.grant_id, r.app_id, r.user_id, r.scopes, r.expires_at, r.used_at, r.revoked_at, r.created_at,
       g.revoked_at AS grant_revoked_at, a.client_id
FROM core.oauth_refresh_tokens r
JOIN core.oauth_grants g ON g.id = r.grant_id
JOIN core.apps a ON a.id = r.app_id
WHERE r.token_hash = @token_hash;

-- name: MarkRefreshTokenUsed :exec
UPDATE core.oauth_refresh_tokens SET used_at = now() WHERE token_hash = @token_hash;

-- name: InsertRefreshToken :exec
INSERT INTO core.oauth_refresh_tokens (token_hash, grant_id, app_id, user_id, scopes, expires_at)
VALUES (@token_hash, @grant_id, @app_id, @user_id, @scopes, @expires_at);

-- name: LockGrant :one
SELECT revoked_at FROM core.oauth_grants WHERE id = @id FOR UPDATE;

-- name: GetConsent :one
-- The consent remembered; pages_chosen false when no Page choice was made.
SELECT scopes, (page_ids IS NOT NULL)::boolean AS pages_chosen, COALESCE(page_ids, '{}')::bigint[] AS page_ids
FROM core.oauth_consents WHERE user_id = @user_id AND app_id = @app_id;

-- name: AddConsent :exec
-- Remembers consent: the union of the scopes granted so far, and the Pages
-- chosen when choose_pages (NULL page_ids: every Page; otherwise the choice
-- stays as it was).
INSERT INTO core.oauth_consents (user_id, app_id, scopes, page_ids)
VALUES (@user_id, @app_id, @scopes, CASE WHEN @choose_pages::boolean THEN sqlc.narg(page_ids)::bigint[] END)
ON CONFLICT (user_id, app_id) DO UPDATE
SET scopes = ARRAY(SELECT DISTINCT s FROM unnest(core.oauth_consents.scopes || excluded.scopes) AS s ORDER BY s),
    page_ids = CASE WHEN @choose_pages::boolean THEN excluded.page_ids ELSE core.oauth_consents.page_ids END,
    updated_at = now();

-- name: InsertSigningKey :exec
-- Inserts the first active signing key; a concurrent gateway's insert wins
-- harmlessly (both then read the same key).
INSERT INTO core.signing_keys (kid, algorithm, private_key, sealed, active)
VALUES (@kid, @algorithm, @private_key, @sealed, true)
ON CONFLICT DO NOTHING;

-- name: ListSigningKeys :many
SELECT * FROM core.signing_keys ORDER BY active DESC, created_at DESC;
