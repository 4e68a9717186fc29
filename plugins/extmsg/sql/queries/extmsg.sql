-- name: UpsertAccount :one
-- Connects the business's account to the app, or finds it and renames it.
INSERT INTO extmsg.accounts (business_id, app_id, display_name)
VALUES (@business_id, @app_id, @display_name)
ON CONFLICT (business_id, app_id) DO UPDATE SET display_name = EXCLUDED.display_name
RETURNING *;

-- name: GetAccount :one
SELECT * FROM extmsg.accounts WHERE id = @id;

-- name: ListAccountTemplates :many
SELECT * FROM extmsg.templates WHERE account_id = @account_id ORDER BY name;

-- name: LockTemplate :one
SELECT * FROM extmsg.templates WHERE account_id = @account_id AND name = @name FOR UPDATE;

-- name: InsertTemplate :one
-- Nothing when a template of that name appeared meanwhile.
INSERT INTO extmsg.templates (account_id, name, body, params, status)
VALUES (@account_id, @name, @body, @params, @status)
ON CONFLICT (account_id, name) DO NOTHING
RETURNING *;

-- name: EditTemplate :one
UPDATE extmsg.templates
SET body = @body, params = @params, status = @status, rejection_reason = '', submission = NULL,
    submitted_at = NULL, decided_by = NULL, decided_at = NULL, updated_at = now()
WHERE account_id = @account_id AND name = @name
RETURNING *;

-- name: SetTemplateStatus :one
-- A step of the app (approve, submit); a submission joins the queue.
UPDATE extmsg.templates
SET status = @status, updated_at = now(),
    submission   = CASE WHEN @submitted::boolean THEN nextval('extmsg.submission_seq') ELSE submission END,
    submitted_at = CASE WHEN @submitted::boolean THEN now() ELSE submitted_at END
WHERE account_id = @account_id AND name = @name
RETURNING *;

-- name: LockTemplateByID :one
SELECT * FROM extmsg.templates WHERE id = @id FOR UPDATE;

-- name: DecideTemplate :one
UPDATE extmsg.templates
SET status = @status, rejection_reason = @rejection_reason, decided_by = @decided_by, decided_at = now(), updated_at = now()
WHERE account_id = @account_id AND name = @name
RETURNING *;

-- name: QueueAfter :many
SELECT t.*, a.business_id, a.app_id FROM extmsg.templates t JOIN extmsg.accounts a ON a.id = t.account_id
WHERE t.status = 'pending_review' AND t.submission > @after
ORDER BY t.submission LIMIT @lim;

-- name: QueueBefore :many
SELECT t.*, a.business_id, a.app_id FROM extmsg.templates t JOIN extmsg.accounts a ON a.id = t.account_id
WHERE t.status = 'pending_review' AND t.submission < @before
ORDER BY t.submission DESC LIMIT @lim;
