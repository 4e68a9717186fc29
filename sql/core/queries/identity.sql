-- Users, Pages, apps, App Review and bearer credentials (package identity).

-- name: NextObjectID :one
-- Reserves a decimal id for a user, Page or app.
SELECT nextval('core.object_id')::bigint AS id;

-- name: CountUsers :one
SELECT count(*) FROM core.users;

-- name: CreateUser :one
INSERT INTO core.users (username, name, password_hash, is_staff, test_user_of)
VALUES (@username, @name, @password_hash, @is_staff, sqlc.narg('test_user_of'))
RETURNING *;

-- name: GetUser :one
SELECT * FROM core.users WHERE id = @id;

-- name: GetUserByUsername :one
SELECT * FROM core.users WHERE lower(username) = lower(@username);

-- name: SetUserStaff :execrows
UPDATE core.users SET is_staff = @is_staff WHERE id = @id;

-- name: CreatePage :one
-- A new Page is unpublished, with chat surfacing, inbox automation and the
-- inbox merge off (the columns' defaults, CONTRACT §16).
INSERT INTO core.pages (name, category, created_by)
VALUES (@name, @category, sqlc.narg('created_by'))
RETURNING *;

-- name: CountPagesCreatedBy :one
SELECT count(*) FROM core.pages WHERE created_by = @user_id;

-- name: LockPage :one
-- Serialises changes to one Page's roles, so that two of them cannot both
-- leave it without an owner. NO KEY UPDATE: inserts that reference the Page
-- (links, roles of other Pages) need not wait for it.
SELECT id FROM core.pages WHERE id = @id FOR NO KEY UPDATE;

-- name: UpdatePageSettings :execrows
UPDATE core.pages SET
    published          = coalesce(sqlc.narg(published), published),
    chat_surfacing     = coalesce(sqlc.narg(chat_surfacing), chat_surfacing),
    inbox_merge_linked = coalesce(sqlc.narg(inbox_merge_linked), inbox_merge_linked),
    inbox_automation   = coalesce(sqlc.narg(inbox_automation), inbox_automation),
    assistant_label    = coalesce(sqlc.narg(assistant_label), assistant_label),
    -- 0 clears the default.
    handover_timeout   = CASE WHEN sqlc.narg(handover_timeout)::integer IS NULL THEN handover_timeout
                              ELSE NULLIF(sqlc.narg(handover_timeout)::integer, 0) END
WHERE id = @id;

-- name: GetPageRole :one
-- The user's role on the Page; '' when none.
SELECT COALESCE((SELECT role FROM core.page_roles WHERE page_id = @page_id AND user_id = @user_id), '')::text;

-- name: CountPageOwners :one
SELECT count(*) FROM core.page_roles WHERE page_id = @page_id AND role = 'owner';

-- name: ListPageRoles :many
-- The people of a Page: owners first, then admins, then editors, each in
-- user id order.
SELECT r.user_id, u.name, r.role
FROM core.page_roles r JOIN core.users u ON u.id = r.user_id
WHERE r.page_id = @page_id
ORDER BY CASE r.role WHEN 'owner' THEN 0 WHEN 'admin' THEN 1 ELSE 2 END, r.user_id;

-- name: GetPage :one
SELECT * FROM core.pages WHERE id = @id;

-- name: UpsertPageRole :exec
INSERT INTO core.page_roles (page_id, user_id, role) VALUES (@page_id, @user_id, @role)
ON CONFLICT (page_id, user_id) DO UPDATE SET role = excluded.role;

-- name: DeletePageRole :execrows
DELETE FROM core.page_roles WHERE page_id = @page_id AND user_id = @user_id;

-- name: ListManagedPages :many
-- Pages the user has a role on (owner, admin, editor), in id order, after a
-- cursor; for a token of app_id (0: none), only those the person chose for
-- the app when a choice was made (granular consent, CONTRACT §17).
SELECT p.*, r.role
FROM core.page_roles r JOIN core.pages p ON p.id = r.page_id
LEFT JOIN core.oauth_consents oc ON oc.user_id = r.user_id AND oc.app_id = @app_id
WHERE r.user_id = @user_id AND p.id > @after_id
  AND (oc.page_ids IS NULL OR p.id = ANY(oc.page_ids))
ORDER BY p.id
LIMIT @max_rows;

-- name: PageAccess :one
-- Everything authorization needs to know about one Page for one caller,
-- in one round trip. user_role is empty when the user has no role; the link
-- columns describe the app's link to the Page (none when app_id is 0);
-- chosen is false when the user chose other Pages for the app (granular
-- consent).
SELECT p.published, p.chat_surfacing, p.inbox_automation, p.inbox_merge_linked, p.name, p.assistant_label,
       p.handover_timeout,
       COALESCE((SELECT r.role FROM core.page_roles r
                 WHERE r.page_id = p.id AND r.user_id = @user_id), '')::text AS user_role,
       EXISTS (SELECT 1 FROM core.page_links l WHERE l.page_id = p.id AND l.app_id = @app_id) AS app_linked,
       COALESCE((SELECT l.products FROM core.page_links l
                 WHERE l.page_id = p.id AND l.app_id = @app_id), '{}')::text[] AS link_products,
       COALESCE((SELECT array_agg(ap.product ORDER BY ap.product) FROM core.app_products ap
                 WHERE ap.app_id = @app_id), '{}')::text[] AS app_products,
       NOT EXISTS (SELECT 1 FROM core.oauth_consents oc
                   WHERE oc.user_id = @user_id AND oc.app_id = @app_id
                     AND oc.page_ids IS NOT NULL AND NOT p.id = ANY(oc.page_ids)) AS chosen
FROM core.pages p
WHERE p.id = @page_id;

-- name: CreateApp :one
INSERT INTO core.apps (id, name, client_id, client_secret_hash, mode, created_by)
VALUES (@id, @name, @client_id, @client_secret_hash, @mode, sqlc.narg('created_by'))
RETURNING *;

-- name: GetApp :one
SELECT * FROM core.apps WHERE id = @id;

-- name: GetAppByClientID :one
SELECT * FROM core.apps WHERE client_id = @client_id;

-- name: SetAppMode :execrows
UPDATE core.apps SET mode = @mode WHERE id = @id;

-- name: SetClientSecret :execrows
UPDATE core.apps
SET client_secret_hash = @client_secret_hash, client_secret_sealed = sqlc.narg('client_secret_sealed')
WHERE id = @id;

-- name: AddRedirectURI :exec
INSERT INTO core.app_redirect_uris (app_id, uri) VALUES (@app_id, @uri)
ON CONFLICT DO NOTHING;

-- name: ListRedirectURIs :many
SELECT uri FROM core.app_redirect_uris WHERE app_id = @app_id ORDER BY uri;

-- name: HasRedirectURI :one
SELECT EXISTS (SELECT 1 FROM core.app_redirect_uris WHERE app_id = @app_id AND uri = @uri);

-- name: EnableAppProduct :exec
INSERT INTO core.app_products (app_id, product) VALUES (@app_id, @product)
ON CONFLICT DO NOTHING;

-- name: ListAppProducts :many
SELECT product FROM core.app_products WHERE app_id = @app_id ORDER BY product;

-- name: UpsertTeamMember :exec
INSERT INTO core.app_team (app_id, user_id, role) VALUES (@app_id, @user_id, @role)
ON CONFLICT (app_id, user_id) DO UPDATE SET role = excluded.role;

-- name: GetTeamRole :one
SELECT role FROM core.app_team WHERE app_id = @app_id AND user_id = @user_id;

-- name: AddTestUser :exec
INSERT INTO core.app_test_users (app_id, user_id) VALUES (@app_id, @user_id)
ON CONFLICT DO NOTHING;

-- name: MayAuthorizeInDevelopment :one
-- Whether the user is on the app's team or one of its Test Users.
SELECT EXISTS (
    SELECT 1 FROM core.app_team t WHERE t.app_id = @app_id AND t.user_id = @user_id
    UNION ALL
    SELECT 1 FROM core.app_test_users tu WHERE tu.app_id = @app_id AND tu.user_id = @user_id
);

-- name: UpsertPageLink :exec
INSERT INTO core.page_links (page_id, app_id, products) VALUES (@page_id, @app_id, @products)
ON CONFLICT (page_id, app_id) DO UPDATE SET products = excluded.products;

-- name: DeletePageLink :execrows
DELETE FROM core.page_links WHERE page_id = @page_id AND app_id = @app_id;

-- name: SubmitScopeReview :one
-- Records a review request, unless the scope is already approved.
INSERT INTO core.app_scope_reviews (app_id, scope, status, score, reason, decided_at, use_case, privacy_policy_url)
VALUES (@app_id, @scope, @status, sqlc.narg('score'), @reason, sqlc.narg('decided_at'), @use_case, @privacy_policy_url)
ON CONFLICT (app_id, scope) DO UPDATE
SET status = excluded.status, score = excluded.score, reason = excluded.reason,
    submitted_at = now(), decided_at = excluded.decided_at, reviewer_id = NULL,
    use_case = excluded.use_case, privacy_policy_url = excluded.privacy_policy_url
WHERE core.app_scope_reviews.status NOT IN ('approved', 'automated_approved')
RETURNING *;

-- name: GetScopeReview :one
SELECT * FROM core.app_scope_reviews WHERE app_id = @app_id AND scope = @scope;

-- name: DecideScopeReview :one
-- Staff decision on a pending review.
UPDATE core.app_scope_reviews
SET status = @status, reviewer_id = @reviewer_id, reason = @reason, decided_at = now()
WHERE app_id = @app_id AND scope = @scope AND status = 'pending'
RETURNING *;

-- name: ListScopeReviews :many
SELECT * FROM core.app_scope_reviews WHERE app_id = @app_id ORDER BY scope;

-- name: ListPendingScopeReviews :many
SELECT * FROM core.app_scope_reviews WHERE status = 'pending' ORDER BY submitted_at, app_id, scope;

-- name: ApprovedScopes :many
-- Scopes App Review approved, by staff or by the automated review.
SELECT scope FROM core.app_scope_reviews
WHERE app_id = @app_id AND status IN ('approved', 'automated_approved') ORDER BY scope;

-- name: InsertCredential :exec
INSERT INTO core.credentials (token_hash, kind, app_id, user_id, scopes, grant_id, hint, expires_at)
VALUES (@token_hash, @kind, sqlc.narg('app_id'), sqlc.narg('user_id'), @scopes, sqlc.narg('grant_id'), @hint, sqlc.narg('expires_at'));

-- name: LookupCredential :one
-- The one query that authenticates a request: the credential by hash, with
-- the app's mode, its data use checkup's due time, the user's staff flag and,
-- for a user access token, the Pages the person chose for the app
-- (pages_chosen false: no choice made).
SELECT c.kind, c.app_id, c.user_id, c.scopes, c.expires_at, c.revoked_at, c.created_at,
       COALESCE(a.mode, '')::text AS app_mode, COALESCE(a.client_id, '')::text AS client_id,
       COALESCE(a.name, '')::text AS app_name, COALESCE(u.is_staff, false)::boolean AS is_staff,
       duc.due_at AS checkup_due_at,
       (oc.page_ids IS NOT NULL)::boolean AS pages_chosen, COALESCE(oc.page_ids, '{}')::bigint[] AS page_ids
FROM core.credentials c
LEFT JOIN core.apps a ON a.id = c.app_id
LEFT JOIN core.users u ON u.id = c.user_id
LEFT JOIN core.app_data_use_checkups duc ON duc.app_id = c.app_id
LEFT JOIN core.oauth_consents oc ON c.kind = 1 AND oc.user_id = c.user_id AND oc.app_id = c.app_id
WHERE c.token_hash = @token_hash;

-- name: RevokeCredential :one
UPDATE core.credentials SET revoked_at = now()
WHERE token_hash = @token_hash AND revoked_at IS NULL
RETURNING kind, app_id, user_id;

-- name: ReplaceLabeledCredential :exec
-- Sets the credential that exists once under label (the admin token).
INSERT INTO core.credentials (token_hash, kind, label)
VALUES (@token_hash, @kind, @label)
ON CONFLICT (label) WHERE label IS NOT NULL
DO UPDATE SET token_hash = excluded.token_hash, kind = excluded.kind, revoked_at = NULL, created_at = now();

-- name: InsertLabeledCredentialIfAbsent :execrows
-- Stores a credential under label unless a valid one is there; a revoked
-- one is replaced.
INSERT INTO core.credentials (token_hash, kind, label)
VALUES (@token_hash, @kind, @label)
ON CONFLICT (label) WHERE label IS NOT NULL DO UPDATE
SET token_hash = excluded.token_hash, kind = excluded.kind, revoked_at = NULL, created_at = now()
WHERE core.credentials.revoked_at IS NOT NULL;

-- name: LockInstallation :one
-- Serialises the development seed between gateways starting together.
SELECT dev_seeded FROM core.installation FOR UPDATE;

-- name: RevokeLabeledCredential :execrows
-- Revokes the credential stored under label, if any.
UPDATE core.credentials SET revoked_at = now()
WHERE label = @label AND revoked_at IS NULL;

-- name: AssignedAssets :many
-- The assets a user has a role on (me/assigned_assets): Pages, then apps
-- of the user's teams, each with the business holding it (0: none); each
-- in id order, at most 1,000 of each.
(SELECT 'PAGE'::text AS type, p.id, p.name, r.role,
    coalesce((SELECT b.business_id FROM core.business_assets b WHERE b.asset_type = 'PAGE' AND b.asset_id = p.id), 0)::bigint AS business_id
 FROM core.page_roles r JOIN core.pages p ON p.id = r.page_id
 WHERE r.user_id = @user_id ORDER BY p.id LIMIT 1000)
UNION ALL
(SELECT 'APP'::text, a.id, a.name, t.role,
    coalesce((SELECT b.business_id FROM core.business_assets b WHERE b.asset_type = 'APP' AND b.asset_id = a.id), 0)::bigint
 FROM core.app_team t JOIN core.apps a ON a.id = t.app_id
 WHERE t.user_id = @user_id ORDER BY a.id LIMIT 1000);
