package docsearch

import (
	"fmt"
	"sort"
	"strings"

	"github.com/svcplatform/svc/gateway/internal/openapi"
)

// APIEntries are the reference's entries: one per operation
// ("/api/v1/openapi.json#/paths/~1api~1v1~1hello~1{name}/get") and one per
// Graph node ("/api/v1/openapi.json#/x-svc-nodes/3").
func APIEntries(doc *openapi.Document) []Entry {
	var out []Entry
	paths := make([]string, 0, len(doc.Paths))
	for p := range doc.Paths {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		item := doc.Paths[p]
		methods := make([]string, 0, len(item))
		for m := range item {
			methods = append(methods, m)
		}
		sort.Strings(methods)
		for _, m := range methods {
			op := item[m]
			var body strings.Builder
			fmt.Fprintf(&body, "%s\n%s\n%s %s\n%s %s %s\n", op.Summary, op.Description, strings.ToUpper(m), words(p),
				op.OperationID, op.Plugin, op.Procedure)
			for _, prm := range op.Parameters {
				fmt.Fprintf(&body, "%s (%s) %s\n", prm.Name, prm.In, prm.Description)
			}
			out = append(out, Entry{
				Path:  openapi.Path + "#/paths/" + pointerToken(p) + "/" + m,
				Kind:  "api",
				Title: strings.ToUpper(m) + " " + p,
				Body:  strings.TrimSpace(body.String()),
			})
		}
	}
	for i, n := range doc.Nodes {
		out = append(out, Entry{
			Path:  fmt.Sprintf("%s#/x-svc-nodes/%d", openapi.Path, i),
			Kind:  "api",
			Title: "Graph " + n.Method + " " + n.Node,
			Body:  fmt.Sprintf("Graph node %s %s (%s), served by %s as %s.", n.Method, n.Node, words(n.Node), n.Plugin, n.Procedure),
		})
	}
	return out
}

// pointerToken escapes a JSON pointer token (RFC 6901).
func pointerToken(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// words spells a path as words for the text search parser, which would
// otherwise read "/api/v1/hello/{name}" as one file-path token.
func words(p string) string {
	return strings.Join(strings.FieldsFunc(p, func(r rune) bool {
		return strings.ContainsRune("/{}._=*:", r)
	}), " ")
}
