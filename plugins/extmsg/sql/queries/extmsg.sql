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

-- name: GetAccountByPhone :one
SELECT * FROM extmsg.accounts WHERE phone_number = @phone_number;

-- name: GetTemplate :one
SELECT * FROM extmsg.templates WHERE account_id = @account_id AND name = @name;

-- name: UserWrites :one
-- The person's conversation with the account, made or found and locked,
-- its customer window restarted.
INSERT INTO extmsg.conversations (account_id, user_id, window_expires_at)
VALUES (@account_id, @user_id, now() + make_interval(secs => @window_seconds::double precision))
ON CONFLICT (account_id, user_id) DO UPDATE
SET window_expires_at = EXCLUDED.window_expires_at, updated_at = now()
RETURNING *;

-- name: BusinessWrites :one
-- The account's conversation with the person, made or found and locked;
-- the window is left as it is.
INSERT INTO extmsg.conversations (account_id, user_id)
VALUES (@account_id, @user_id)
ON CONFLICT (account_id, user_id) DO UPDATE SET updated_at = now()
RETURNING *;

-- name: InsertMessage :one
INSERT INTO extmsg.messages (account_id, conversation_id, direction, kind, text, template_name, app_id)
VALUES (@account_id, @conversation_id, @direction, @kind, @text, sqlc.narg(template_name), sqlc.narg(app_id))
RETURNING *;

-- name: MarkMessages :many
-- Moves the conversation's outbound messages in from_statuses to status
-- (one trigger of msgstatus's table), with error on a failure.
UPDATE extmsg.messages
SET status = @status, error_code = sqlc.narg(error_code), error_message = sqlc.narg(error_message), updated_at = now()
WHERE account_id = @account_id AND conversation_id = @conversation_id AND direction = 'outbound'
  AND status = ANY (@from_statuses::text[]) AND (sqlc.narg(only_id)::bigint IS NULL OR id = sqlc.narg(only_id))
RETURNING id;

-- name: LockConversation :one
SELECT * FROM extmsg.conversations WHERE account_id = @account_id AND id = @id FOR UPDATE;

-- name: GetConversation :one
SELECT * FROM extmsg.conversations WHERE id = @id;

-- name: ListConversations :many
SELECT * FROM extmsg.conversations WHERE account_id = @account_id ORDER BY updated_at DESC, id DESC LIMIT 100;

-- name: ListMessages :many
-- The conversation's newest messages, newest first.
SELECT * FROM extmsg.messages WHERE account_id = @account_id AND conversation_id = @conversation_id ORDER BY id DESC LIMIT 200;

-- name: UserConversations :many
SELECT c.*, a.display_name, a.phone_number FROM extmsg.conversations c JOIN extmsg.accounts a ON a.id = c.account_id
WHERE c.user_id = @user_id ORDER BY c.updated_at DESC, c.id DESC LIMIT 100;

-- name: ConversationWith :one
-- The account's conversation with the person, locked.
SELECT * FROM extmsg.conversations WHERE account_id = @account_id AND user_id = @user_id FOR UPDATE;
