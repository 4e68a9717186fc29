-- name: ListActiveLenses :many
SELECT id, name, icon_url FROM lenses.lenses WHERE active ORDER BY position, id;
