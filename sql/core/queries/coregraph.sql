-- Queries of the gateway's own Graph nodes (svc.core.v1.GraphService).

-- name: ListConnectedApps :many
-- Apps linked to a Page, in app id order, after a cursor.
SELECT a.id, a.name, l.products
FROM core.page_links l JOIN core.apps a ON a.id = l.app_id
WHERE l.page_id = @page_id AND a.id > @after_id
ORDER BY a.id LIMIT @max_rows;

-- name: ListAppPageLinks :many
-- Pages linked to an app, in Page id order, after a cursor.
SELECT p.id, p.name, l.products
FROM core.page_links l JOIN core.pages p ON p.id = l.page_id
WHERE l.app_id = @app_id AND p.id > @after_id
ORDER BY p.id LIMIT @max_rows;

-- name: GetAppConfig :one
SELECT platform_config FROM core.app_config WHERE app_id = @app_id;

-- name: PutAppConfig :exec
INSERT INTO core.app_config (app_id, platform_config) VALUES (@app_id, @platform_config)
ON CONFLICT (app_id) DO UPDATE SET platform_config = EXCLUDED.platform_config, updated_at = now();
