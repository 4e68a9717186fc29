-- name: LockOptIn :one
-- A user's opt-in record with a Page, locked for the transaction.
SELECT * FROM svcchat.opt_ins
WHERE page_id = @page_id AND user_id = @user_id
FOR UPDATE;

-- name: PutOptIn :one
INSERT INTO svcchat.opt_ins (page_id, user_id, status, purposes, source)
VALUES (@page_id, @user_id, @status, @purposes, @source)
ON CONFLICT (page_id, user_id) DO UPDATE
SET status = EXCLUDED.status, purposes = EXCLUDED.purposes, source = EXCLUDED.source, updated_at = now()
RETURNING *;
