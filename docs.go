// Package svc is the repository root as the gateway embeds it: the
// developer docs (README.md, docs/*.md and docs/design/*.md) that GET
// /api/developers/docs/search searches. It holds nothing else; go:embed
// cannot reach above a package's folder, hence a package here.
package svc

import "embed"

// Docs are README.md, docs/*.md and docs/design/*.md, as built into the
// binary.
//
//go:embed README.md docs/*.md docs/design/*.md
var Docs embed.FS
