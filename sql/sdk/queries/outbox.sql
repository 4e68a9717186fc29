-- Queries of the plugin SDK. They run in the caller's transaction, against
-- the core schema the gateway migrates.

-- name: InsertEvent :exec
INSERT INTO core.outbox (id, type, page_id, app_id, data, ordering_key, user_id)
VALUES (@id, @type, sqlc.narg(page_id), sqlc.narg(app_id), @data, sqlc.narg(ordering_key), sqlc.narg(user_id));
