-- name: EnsureInstallation :one
-- Creates the installation row on first start and returns it.
INSERT INTO core.installation (id) VALUES (@id)
ON CONFLICT (singleton) DO UPDATE SET singleton = true
RETURNING *;

-- name: MarkDevSeeded :exec
UPDATE core.installation SET dev_seeded = true;
