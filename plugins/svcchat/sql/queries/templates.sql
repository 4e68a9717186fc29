-- name: ListAppTemplates :many
SELECT * FROM svcchat.templates WHERE app_id = @app_id ORDER BY name;

-- name: LockAppTemplate :one
SELECT * FROM svcchat.templates WHERE app_id = @app_id AND name = @name FOR UPDATE;

-- name: InsertTemplate :one
INSERT INTO svcchat.templates (app_id, name, body, params, status, source)
VALUES (@app_id, @name, @body, @params, @status, @source)
RETURNING *;

-- name: EditTemplate :one
-- A new definition: status as the lifecycle says (draft), review cleared.
UPDATE svcchat.templates
SET body = @body, params = @params, status = @status, source = @source, rejection_reason = '',
    submitted_at = NULL, decided_at = NULL, decided_by = '', updated_at = now()
WHERE app_id = @app_id AND name = @name
RETURNING *;

-- name: DeleteConfigTemplate :exec
DELETE FROM svcchat.templates WHERE app_id = @app_id AND name = @name AND source = 'config';

-- name: SetTemplateStatus :one
-- approve (development mode) or submit; a submission takes a fresh id, so
-- the staff queue in id order is oldest submission first.
UPDATE svcchat.templates
SET status = @status,
    id = CASE WHEN @submitted::boolean THEN nextval('svcchat.template_id_seq') ELSE id END,
    submitted_at = CASE WHEN @submitted::boolean THEN now() ELSE submitted_at END,
    updated_at = now()
WHERE app_id = @app_id AND name = @name
RETURNING *;

-- name: LockTemplateByID :one
SELECT * FROM svcchat.templates WHERE id = @id FOR UPDATE;

-- name: DecideTemplate :one
UPDATE svcchat.templates
SET status = @status, rejection_reason = @rejection_reason, decided_at = now(), decided_by = @decided_by,
    updated_at = now()
WHERE app_id = @app_id AND name = @name
RETURNING *;

-- name: TemplateQueueFirst :many
SELECT * FROM svcchat.templates WHERE status = 'pending_review'
ORDER BY id ASC LIMIT @lim;

-- name: TemplateQueueAfter :many
SELECT * FROM svcchat.templates WHERE status = 'pending_review' AND id > @cursor
ORDER BY id ASC LIMIT @lim;

-- name: TemplateQueueBefore :many
-- Newer-to-older from the cursor; the caller reverses the rows.
SELECT * FROM svcchat.templates WHERE status = 'pending_review' AND id < @cursor
ORDER BY id DESC LIMIT @lim;

-- name: LockSelfApprovedTemplates :many
-- The app's templates it approved itself in development (approved, no
-- staff decision): going live sends them to review.
SELECT * FROM svcchat.templates
WHERE app_id = @app_id AND status = 'approved' AND decided_at IS NULL
ORDER BY name FOR UPDATE;
