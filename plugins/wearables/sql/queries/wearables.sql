-- name: PairedDevice :one
SELECT * FROM wearables.devices WHERE user_id = @user_id AND replaced_at IS NULL;

-- name: PairDevice :one
-- Pairs a device unless the user has one already (then no row).
INSERT INTO wearables.devices (user_id, simulated)
VALUES (@user_id, @simulated)
ON CONFLICT (user_id) WHERE replaced_at IS NULL DO NOTHING
RETURNING *;

-- name: ReplaceDevice :exec
UPDATE wearables.devices SET replaced_at = now()
WHERE id = @id AND replaced_at IS NULL;

-- name: InsertCard :one
INSERT INTO wearables.cards (user_id, app_id, title, body, actions, expires_at)
VALUES (@user_id, @app_id, @title, @body, @actions, now() + make_interval(secs => @ttl_seconds::float8))
RETURNING *;

-- name: ExpireDisplacedCards :execrows
-- Keeps the newest @keep waiting cards of a user; older ones expire. Rows
-- locked by another transaction (a delivery, a concurrent push) are skipped,
-- never waited for: concurrent pushes of one user cannot deadlock, and the
-- next push enforces the bound on what was skipped.
UPDATE wearables.cards SET status = 'expired'
WHERE id IN (
    SELECT c.id FROM wearables.cards c
    WHERE c.user_id = @user_id AND c.status = 'queued'
    ORDER BY c.id DESC OFFSET @keep
    FOR UPDATE SKIP LOCKED
);

-- name: ExpireLapsedCards :execrows
UPDATE wearables.cards SET status = 'expired'
WHERE status = 'queued' AND expires_at <= now();

-- name: WaitingCards :many
-- The cards a user's device should receive, oldest first.
SELECT * FROM wearables.cards
WHERE user_id = @user_id AND status = 'queued' AND expires_at > now()
ORDER BY id LIMIT @lim;

-- name: LockCard :one
-- A card with its row locked for a transition; lapsed says a queued card
-- is past its expiry (the sweep may not have marked it yet).
SELECT c.*, (c.status = 'queued' AND c.expires_at <= now())::boolean AS lapsed
FROM wearables.cards c WHERE c.id = @id FOR UPDATE;

-- name: SetCardStatus :exec
UPDATE wearables.cards SET
    status       = @status,
    device_id    = coalesce(sqlc.narg(device_id), device_id),
    action_id    = coalesce(sqlc.narg(action_id), action_id),
    delivered_at = CASE WHEN @status = 'delivered' AND delivered_at IS NULL THEN now() ELSE delivered_at END,
    confirmed_at = CASE WHEN @status = 'confirmed' AND confirmed_at IS NULL THEN now() ELSE confirmed_at END
WHERE id = @id;

-- name: SimulatedDeliveries :many
-- Waiting cards of users whose paired device is simulated, locked so that
-- one process delivers each.
SELECT c.id, d.id AS device_id
FROM wearables.cards c
JOIN wearables.devices d ON d.user_id = c.user_id AND d.replaced_at IS NULL AND d.simulated
WHERE c.status = 'queued' AND c.expires_at > now()
ORDER BY c.id LIMIT @lim
FOR UPDATE OF c SKIP LOCKED;

-- name: AppCards :many
-- The portal's view of an app's cards, newest first.
SELECT * FROM wearables.cards WHERE app_id = @app_id ORDER BY id DESC LIMIT 100;

-- name: AppDevices :many
-- The devices the app's cards reached, with how many each received.
SELECT d.id, d.user_id, d.simulated, d.paired_at, d.replaced_at, count(*)::int4 AS cards
FROM wearables.cards c JOIN wearables.devices d ON d.id = c.device_id
WHERE c.app_id = @app_id
GROUP BY d.id
ORDER BY d.paired_at DESC, d.id DESC LIMIT 100;
