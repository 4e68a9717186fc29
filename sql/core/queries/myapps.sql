-- Apps seen from a team member (GET me/apps, the developer console).

-- name: ListAppsOfUser :many
SELECT a.id, a.name, a.client_id, a.mode, t.role
FROM core.app_team t
JOIN core.apps a ON a.id = t.app_id
WHERE t.user_id = @user_id AND a.id > @after_id
ORDER BY a.id
LIMIT @max_rows;
