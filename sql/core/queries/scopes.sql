-- The scopes plugins declare (package identity, scopes.go).

-- name: ListPluginScopes :many
SELECT name, plugin, description, review, pages FROM core.plugin_scopes ORDER BY name;

-- name: DeclarePluginScope :execrows
-- Records a plugin's scope; a scope another plugin declared is left as it
-- is (0 rows): one owner per scope.
INSERT INTO core.plugin_scopes (name, plugin, description, review, pages)
VALUES (@name, @plugin, @description, @review, @pages)
ON CONFLICT (name) DO UPDATE
SET description = EXCLUDED.description, review = EXCLUDED.review, pages = EXCLUDED.pages, updated_at = now()
WHERE core.plugin_scopes.plugin = EXCLUDED.plugin;
