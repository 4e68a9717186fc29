-- The developer docs search index (CONTRACT §12, GET
-- /api/developers/docs/search): one row per section of the embedded docs
-- (README.md, docs/*.md) and per entry of the API reference (each OpenAPI
-- operation and Graph node of the route table in use). The gateway
-- rewrites it at start and whenever the route table changes; the rows are
-- derived, never edited.
CREATE TABLE core.docs_sections (
    path   text PRIMARY KEY,           -- "docs/PLUGINS.md#events", "/api/v1/openapi.json#/paths/..."
    kind   text NOT NULL CHECK (kind IN ('doc', 'api')),
    title  text NOT NULL,
    body   text NOT NULL,
    -- The heading weighs more than the text under it.
    search tsvector GENERATED ALWAYS AS (
        setweight(to_tsvector('english', title), 'A') || setweight(to_tsvector('english', body), 'B')
    ) STORED
);

CREATE INDEX docs_sections_search ON core.docs_sections USING gin (search);
