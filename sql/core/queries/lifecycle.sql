-- The app lifecycle (package identity): redirect URIs, team roles, Test
-- Users, key rotation and going live.

-- name: LockApp :one
-- Serialises changes to one app's team, keys and mode.
SELECT id, mode FROM core.apps WHERE id = @id FOR UPDATE;

-- name: LockUser :one
-- Serialises the creations that count against one user's limits (apps),
-- and says whether the user is a Test User (who creates no apps).
-- NO KEY UPDATE: a session's insert (a foreign key to the user) must not
-- wait for it.
SELECT id, test_user_of FROM core.users WHERE id = @id FOR NO KEY UPDATE;

-- name: CountAppsCreatedBy :one
SELECT count(*) FROM core.apps WHERE created_by = @user_id;

-- name: CountTestUsers :one
SELECT count(*) FROM core.app_test_users WHERE app_id = @app_id;

-- name: DeleteRedirectURI :execrows
DELETE FROM core.app_redirect_uris WHERE app_id = @app_id AND uri = @uri;

-- name: CountRedirectURIs :one
SELECT count(*) FROM core.app_redirect_uris WHERE app_id = @app_id;

-- name: ListTeam :many
SELECT user_id, role FROM core.app_team WHERE app_id = @app_id ORDER BY user_id;

-- name: CountTeamAdmins :one
SELECT count(*) FROM core.app_team WHERE app_id = @app_id AND role = 'admin';

-- name: DeleteTeamMember :execrows
DELETE FROM core.app_team WHERE app_id = @app_id AND user_id = @user_id;

-- name: ListTestUsers :many
SELECT u.id, u.username, u.name, (u.test_user_of IS NOT NULL AND u.test_user_of = t.app_id)::boolean AS made_for_app
FROM core.app_test_users t JOIN core.users u ON u.id = t.user_id
WHERE t.app_id = @app_id
ORDER BY u.id;

-- name: DeleteTestUser :execrows
DELETE FROM core.app_test_users WHERE app_id = @app_id AND user_id = @user_id;

-- name: DeleteUserMadeForApp :execrows
-- Deletes a Test User the app created (with its sessions and tokens).
DELETE FROM core.users WHERE id = @user_id AND test_user_of = @app_id;

-- name: SetClientSecretSealed :exec
UPDATE core.apps SET client_secret_sealed = @client_secret_sealed WHERE id = @id;

-- name: RotateClientSecret :execrows
-- The current secret becomes the previous one until previous_expires_at.
UPDATE core.apps
SET previous_secret_hash = client_secret_hash, previous_secret_sealed = client_secret_sealed,
    previous_secret_expires_at = @previous_expires_at,
    client_secret_hash = @client_secret_hash, client_secret_sealed = sqlc.narg('client_secret_sealed')
WHERE id = @id;

-- name: GetClientSecretsSealed :one
SELECT client_secret_sealed, previous_secret_sealed, previous_secret_expires_at FROM core.apps WHERE id = @id;

-- name: ExpireAppKeys :many
-- Sets the end of the overlap on the app's other keys (never extending an
-- earlier end), returning their hashes. An app key has no grant, so its
-- owner_app_id is its app_id (credentials_app_idx, migration 0265).
UPDATE core.credentials
SET expires_at = @until
WHERE owner_app_id = @app_id AND kind = 3 AND revoked_at IS NULL AND token_hash <> @keep
  AND (expires_at IS NULL OR expires_at > @until)
RETURNING token_hash;

-- name: RevokeTestKeys :many
-- Revokes the app's svc_test_ keys (going live), returning their hashes.
UPDATE core.credentials
SET revoked_at = now()
WHERE owner_app_id = @app_id AND kind = 3 AND revoked_at IS NULL AND hint LIKE 'svc\_test\_%'
RETURNING token_hash;

-- name: GrantedScopes :many
-- Scopes users have granted the app and not revoked: the scopes it uses.
SELECT DISTINCT s::text AS scope
FROM core.oauth_grants g, unnest(g.scopes) AS s
WHERE g.app_id = @app_id AND g.revoked_at IS NULL
ORDER BY 1;

-- name: ListReviewQueue :many
-- The staff queue: pending reviews, oldest first, with the app's name.
SELECT sqlc.embed(r), a.name AS app_name
FROM core.app_scope_reviews r JOIN core.apps a ON a.id = r.app_id
WHERE r.status = 'pending'
ORDER BY r.submitted_at, r.app_id, r.scope
LIMIT @max_rows;
