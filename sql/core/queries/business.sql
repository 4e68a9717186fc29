-- Business portfolios, their people, assets and verification (CONTRACT §17).

-- name: InsertBusiness :one
INSERT INTO core.businesses (name, created_by) VALUES (@name, @created_by)
RETURNING id, name, verification_status, verification_reason, created_at;

-- name: GetBusiness :one
SELECT id, name, verification_status, verification_reason, created_at FROM core.businesses WHERE id = @id;

-- name: LockBusiness :one
SELECT id, name, verification_status, verification_reason, created_at FROM core.businesses WHERE id = @id FOR UPDATE;

-- name: SetBusinessVerificationStatus :exec
UPDATE core.businesses SET verification_status = @status, verification_reason = @reason WHERE id = @id;

-- name: CountBusinessesCreatedBy :one
SELECT count(*) FROM core.businesses WHERE created_by = @user_id;

-- name: PutBusinessRole :exec
INSERT INTO core.business_roles (business_id, user_id, role) VALUES (@business_id, @user_id, @role)
ON CONFLICT (business_id, user_id) DO UPDATE SET role = EXCLUDED.role;

-- name: BusinessRole :one
-- The user's role on the business: '' when the business exists and the
-- user has none; no row when the business does not exist.
SELECT coalesce(r.role, '')::text AS role
FROM core.businesses b LEFT JOIN core.business_roles r ON r.business_id = b.id AND r.user_id = @user_id
WHERE b.id = @business_id;

-- name: ListBusinessRoles :many
SELECT r.user_id, u.name, r.role FROM core.business_roles r JOIN core.users u ON u.id = r.user_id
WHERE r.business_id = @business_id ORDER BY r.user_id;

-- name: CountBusinessAdmins :one
SELECT count(*) FROM core.business_roles WHERE business_id = @business_id AND role = 'admin';

-- name: ListUserBusinesses :many
-- The businesses a user has a role on, in id order, after a cursor.
SELECT b.id, b.name, b.verification_status, r.role
FROM core.business_roles r JOIN core.businesses b ON b.id = r.business_id
WHERE r.user_id = @user_id AND b.id > @after_id
ORDER BY b.id LIMIT @max_rows;

-- name: InsertBusinessAsset :execrows
-- Adds an asset to a business; no row when the asset is in a business
-- already (this one or another).
INSERT INTO core.business_assets (asset_type, asset_id, business_id, added_by)
VALUES (@asset_type, @asset_id, @business_id, @added_by)
ON CONFLICT (asset_type, asset_id) DO NOTHING;

-- name: AssetBusiness :one
SELECT business_id FROM core.business_assets WHERE asset_type = @asset_type AND asset_id = @asset_id;

-- name: ListBusinessAssets :many
-- A business's assets with their names (an ad account's name is the ads
-- plugin's: empty here).
SELECT a.asset_type, a.asset_id, coalesce(p.name, ap.name, '')::text AS name
FROM core.business_assets a
LEFT JOIN core.pages p ON a.asset_type = 'PAGE' AND p.id = a.asset_id
LEFT JOIN core.apps ap ON a.asset_type = 'APP' AND ap.id = a.asset_id
WHERE a.business_id = @business_id
ORDER BY a.asset_type, a.asset_id LIMIT 1000;

-- name: BusinessesOfAssets :many
-- The business holding each of the given assets of one type.
SELECT asset_id, business_id FROM core.business_assets
WHERE asset_type = @asset_type AND asset_id = ANY(@asset_ids::bigint[]);

-- name: AppBusinessVerified :one
-- Whether the app belongs to a verified business.
SELECT EXISTS (
  SELECT 1 FROM core.business_assets a JOIN core.businesses b ON b.id = a.business_id
  WHERE a.asset_type = 'APP' AND a.asset_id = @app_id AND b.verification_status = 'verified'
)::boolean;

-- name: InsertBusinessVerification :one
INSERT INTO core.business_verifications (business_id, legal_name, country, documents, requested_by)
VALUES (@business_id, @legal_name, @country, @documents, @requested_by)
RETURNING id, requested_at;

-- name: OpenBusinessVerification :one
SELECT id FROM core.business_verifications WHERE business_id = @business_id AND decided_at IS NULL;

-- name: DecideBusinessVerification :exec
UPDATE core.business_verifications
SET decision = @decision, reason = @reason, decided_by = @decided_by, decided_at = now()
WHERE id = @id;

-- name: BusinessVerificationQueue :many
-- Undecided requests, oldest first.
SELECT v.business_id, b.name, v.legal_name, v.country, v.documents, v.requested_at
FROM core.business_verifications v JOIN core.businesses b ON b.id = v.business_id
WHERE v.decided_at IS NULL
ORDER BY v.requested_at, v.id LIMIT @max_rows;

-- name: PromoteHeirsOfLeavingAdmin :execrows
-- A person leaving the platform (CONTRACT §16) who is the only admin of a
-- business: the business stays, and its employee with the oldest role
-- (then the lowest user id) becomes its admin. A business with no one
-- else keeps no people.
UPDATE core.business_roles r SET role = 'admin'
FROM (
    SELECT DISTINCT ON (e.business_id) e.business_id, e.user_id
    FROM core.business_roles e
    WHERE e.role = 'employee' AND e.business_id IN (
        SELECT a.business_id FROM core.business_roles a
        WHERE a.user_id = @user_id AND a.role = 'admin' AND NOT EXISTS (
            SELECT 1 FROM core.business_roles o
            WHERE o.business_id = a.business_id AND o.role = 'admin' AND o.user_id <> @user_id))
    ORDER BY e.business_id, e.created_at, e.user_id
) heir
WHERE r.business_id = heir.business_id AND r.user_id = heir.user_id;
