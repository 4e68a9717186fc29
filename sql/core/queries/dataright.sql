-- A person's control over their data (CONTRACT §16): the apps they
-- authorized, removing one, the apps' data deletion callbacks, leaving.

-- name: ListAuthorizedApps :many
-- The apps the user authorized: a remembered consent, or a grant not
-- revoked (a development token, a code authorized without remembering),
-- with the union of their scopes and the latest time one was granted.
SELECT a.id, a.name,
       ARRAY(SELECT DISTINCT s FROM unnest(x.scopes) AS s ORDER BY s)::text[] AS scopes,
       x.granted_at::timestamptz AS granted_at
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
