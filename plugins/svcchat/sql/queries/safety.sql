-- name: SendBarrier :one
-- What refuses any send of a Page to a user whatever its kind: the Page's
-- restriction by staff, the user's block of the Page. Queued in a send's
-- first round trip.
SELECT EXISTS (SELECT 1 FROM svcchat.page_restrictions r WHERE r.page_id = @page_id) AS restricted,
       EXISTS (SELECT 1 FROM svcchat.page_blocks b WHERE b.page_id = @page_id AND b.user_id = @user_id) AS blocked;

-- name: BlockPage :one
-- The user's block of a Page, made on first use; a repeat returns the block
-- as it stands.
WITH made AS (
    INSERT INTO svcchat.page_blocks (page_id, user_id) VALUES (@page_id, @user_id)
    ON CONFLICT DO NOTHING
    RETURNING created_at
)
SELECT created_at FROM made
UNION ALL
SELECT created_at FROM svcchat.page_blocks WHERE page_id = @page_id AND user_id = @user_id
LIMIT 1;

-- name: UnblockPage :exec
DELETE FROM svcchat.page_blocks WHERE page_id = @page_id AND user_id = @user_id;

-- name: ListPageBlocks :many
SELECT page_id, created_at FROM svcchat.page_blocks WHERE user_id = @user_id
ORDER BY created_at DESC, page_id LIMIT @lim;

-- name: ReceivedPageMessage :one
-- A message a Page sent into one of user_id's conversations, by id.
SELECT m.page_id, m.id, m.text FROM svcchat.messages m
JOIN svcchat.conversations c ON c.page_id = m.page_id AND c.id = m.conversation_id
WHERE c.user_id = @user_id AND m.id = @id AND m.direction = 'outbound';

-- name: OpenReport :one
-- The reporter's open report of a subject, if any.
SELECT * FROM svcchat.reports
WHERE reporter_user_id = @reporter_user_id AND kind = @kind AND subject_id = @subject_id AND status = 'open';

-- name: InsertReport :one
-- A new open report; none when the reporter has one open of the subject
-- (the caller then reads it).
INSERT INTO svcchat.reports (reporter_user_id, kind, subject_id, page_id, user_id, message_text, reason)
VALUES (@reporter_user_id, @kind, @subject_id, @page_id, @user_id, @message_text, @reason)
ON CONFLICT (reporter_user_id, kind, subject_id) WHERE status = 'open' DO NOTHING
RETURNING *;

-- name: OpenReportsAfter :many
-- The staff queue, oldest first, after a cursor (0: from the start).
SELECT * FROM svcchat.reports WHERE status = 'open' AND id > @cursor
ORDER BY id LIMIT @lim;

-- name: LockReport :one
SELECT * FROM svcchat.reports WHERE id = @id FOR UPDATE;

-- name: DecideReport :one
UPDATE svcchat.reports SET status = @status, decided_at = now(), decided_by = @decided_by
WHERE id = @id
RETURNING *;

-- name: LockRestriction :one
SELECT * FROM svcchat.page_restrictions WHERE page_id = @page_id FOR UPDATE;

-- name: Restrict :one
-- The Page's restriction; a Page already restricted keeps the one it has.
INSERT INTO svcchat.page_restrictions (page_id, report_id, restricted_by)
VALUES (@page_id, @report_id, @restricted_by)
ON CONFLICT (page_id) DO UPDATE SET page_id = EXCLUDED.page_id
RETURNING *;

-- name: LiftRestriction :execrows
DELETE FROM svcchat.page_restrictions WHERE page_id = @page_id;

-- name: RestrictionsAfter :many
SELECT * FROM svcchat.page_restrictions WHERE id > @cursor ORDER BY id LIMIT @lim;

-- name: PruneDecidedReports :execrows
-- Deletes up to lim reports decided before @before, oldest decision first
-- (the retention of a decided report: prune.go). Open reports stay until
-- staff decide them.
DELETE FROM svcchat.reports
WHERE id IN (SELECT r.id FROM svcchat.reports r
             WHERE r.status <> 'open' AND r.decided_at < @before
             ORDER BY r.decided_at LIMIT @lim);
