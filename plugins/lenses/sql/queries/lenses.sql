-- name: ListApprovedLenses :many
SELECT id, name, icon_url FROM lenses.lenses WHERE status = 'approved' ORDER BY decided_at, id;

-- name: ListAppLenses :many
SELECT * FROM lenses.lenses WHERE app_id = @app_id ORDER BY id DESC LIMIT 500;

-- name: CreateLens :one
INSERT INTO lenses.lenses (app_id, name, icon_url) VALUES (@app_id, @name, @icon_url) RETURNING *;

-- name: LockLens :one
SELECT * FROM lenses.lenses WHERE id = @id FOR UPDATE;

-- name: SetLens :one
-- A step of the review table: the new status and, for an edit, the new
-- name and icon. Submitting stamps submitted_at; a decision decided_at;
-- any other step clears the decision.
UPDATE lenses.lenses SET
    name = @name, icon_url = @icon_url, status = @status, rejection_reason = @rejection_reason,
    submitted_at = CASE WHEN @status = 'in_review' THEN now() ELSE submitted_at END,
    decided_at = CASE WHEN @status IN ('approved', 'rejected') THEN now() ELSE NULL END
WHERE id = @id RETURNING *;

-- name: LensQueueFirst :many
SELECT * FROM lenses.lenses WHERE status = 'in_review' ORDER BY id ASC LIMIT @lim;

-- name: LensQueueAfter :many
SELECT * FROM lenses.lenses WHERE status = 'in_review' AND id > @cursor ORDER BY id ASC LIMIT @lim;

-- name: LensQueueBefore :many
-- Newer-to-older from the cursor; the caller reverses the rows.
SELECT * FROM lenses.lenses WHERE status = 'in_review' AND id < @cursor ORDER BY id DESC LIMIT @lim;
