// Package svc is the repository root as the gateway embeds it: the
// developer docs (README.md and docs/*.md) that GET
// /api/developers/docs/search searches. It holds nothing else; go:embed
// cannot reach above a package's folder, hence a package here.
package svc

import "embed"

// Docs are README.md and docs/*.md, as built into the binary.
//
//go:embed README.md docs/*.md
var Docs embed.FS
