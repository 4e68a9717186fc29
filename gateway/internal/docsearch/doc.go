// Package docsearch serves GET /api/developers/docs/search (CONTRACT §12):
// PostgreSQL full-text search over the project's developer docs and its API
// reference.
//
// It owns the core.docs_sections table: the sections of the docs embedded
// in the gateway (package svc at the repository root; README.md,
// docs/*.md and docs/design/*.md split at their headings, each with a GitHub-style anchor, as
// the plain text a reader sees rather than their Markdown) and
// one entry per operation and Graph node of the OpenAPI document (package
// openapi). A Refresher rewrites the table at start and whenever the route
// table changes, off the request path: a loaded partner plugin's paths
// become searchable without a rebuild. Unchanged rows are left alone, so a
// refresh costs little. Search uses websearch_to_tsquery over a weighted
// tsvector (headings first) with a GIN index, and ts_headline for the
// snippet.
//
// Who may search: anyone, with or without a credential, as anyone may read
// the docs; the query is bounded (1 to 200 characters, at most 20 hits)
// and served from the index.
//
// It must not serve the docs themselves or decide what the API is: it only
// indexes what the embedded files and the reference say.
package docsearch
