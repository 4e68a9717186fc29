-- The data use checkup (package identity, CONTRACT §17).

-- name: GetDataUseCheckup :one
SELECT app_id, due_at, certified_at, certified_by, uses, reminded_for
FROM core.app_data_use_checkups WHERE app_id = @app_id;

-- name: ScheduleDataUseCheckup :exec
-- The first due time, when the app goes live; a row already there (an
-- operator's due time) stays.
INSERT INTO core.app_data_use_checkups (app_id, due_at) VALUES (@app_id, @due_at)
ON CONFLICT (app_id) DO NOTHING;

-- name: SetDataUseCheckupDue :exec
-- The operator's due time.
INSERT INTO core.app_data_use_checkups (app_id, due_at) VALUES (@app_id, @due_at)
ON CONFLICT (app_id) DO UPDATE SET due_at = excluded.due_at;

-- name: CertifyDataUseCheckup :execrows
UPDATE core.app_data_use_checkups
SET certified_at = @certified_at, certified_by = @certified_by, uses = @uses, due_at = @next_due_at
WHERE app_id = @app_id;

-- name: ClaimDataUseCheckupReminders :many
-- The live apps whose checkup is due by @due_by (its window has opened)
-- and whose reminder for that due time is owed, locked so that two
-- gateways never write one reminder twice.
SELECT c.app_id, c.due_at
FROM core.app_data_use_checkups c
JOIN core.apps a ON a.id = c.app_id
WHERE c.reminded_for IS DISTINCT FROM c.due_at AND c.due_at <= @due_by AND a.mode = 'live'
ORDER BY c.due_at
LIMIT @batch
FOR UPDATE OF c SKIP LOCKED;

-- name: MarkDataUseCheckupReminded :exec
UPDATE core.app_data_use_checkups SET reminded_for = due_at WHERE app_id = @app_id;
