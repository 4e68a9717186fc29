-- name: UpsertDocsSections :exec
-- Writes the sections given, leaving unchanged rows alone (their search
-- vector is not recomputed).
INSERT INTO core.docs_sections (path, kind, title, body)
SELECT unnest(@paths::text[]), unnest(@kinds::text[]), unnest(@titles::text[]), unnest(@bodies::text[])
ON CONFLICT (path) DO UPDATE SET kind = excluded.kind, title = excluded.title, body = excluded.body
WHERE (core.docs_sections.kind, core.docs_sections.title, core.docs_sections.body)
      IS DISTINCT FROM (excluded.kind, excluded.title, excluded.body);

-- name: DeleteDocsSectionsExcept :exec
-- Removes the sections that are no longer there (a plugin removed, a
-- heading renamed).
DELETE FROM core.docs_sections WHERE NOT (path = ANY(@paths::text[]));

-- name: LockDocsSections :exec
-- Serialises refreshes by several gateways sharing one database.
SELECT pg_advisory_xact_lock(hashtext('core.docs_sections'));

-- name: SearchDocsSections :many
-- The best sections for a web-search query, with a highlighted passage.
SELECT s.title, s.path,
       ts_headline('english', s.body, q.query,
                   'StartSel=**, StopSel=**, MaxWords=35, MinWords=12, MaxFragments=1')::text AS snippet
FROM core.docs_sections s, websearch_to_tsquery('english', @query::text) AS q(query)
WHERE s.search @@ q.query
ORDER BY ts_rank(s.search, q.query) DESC, s.path
LIMIT @max_results::int;
