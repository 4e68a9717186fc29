// Package chatapp serves /chat, the consumer chat app emulated for
// development (CONTRACT §14): a developer signs in as any seeded user or Test
// User and sees what a consumer sees — Page threads opened by their deep
// links, direct messages, writing to a Page, opt-in and opt-out, typing, the
// assistant's replies, message status and the sponsored item.
//
// It is static: one HTML page, a stylesheet and an ES module embedded in the
// gateway binary. The module calls only the public mobile APIs with the
// session token of POST /api/mobile/auth/session, exactly as a phone app
// would, so the server side holds no state and no logic of its own; what
// works here works for any client of those APIs.
package chatapp

import (
	"embed"
	"io/fs"
	"net/http"
	"strings"

	"github.com/svcplatform/svc/gateway/internal/web"
)

//go:embed static
var static embed.FS

// Handler serves GET /chat (the page) and GET /chat/<asset>.
func Handler() http.Handler {
	files, err := fs.Sub(static, "static")
	if err != nil {
		panic(err) // the embedded tree is fixed at build time
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := strings.TrimPrefix(r.URL.Path, "/chat")
		name = strings.TrimPrefix(name, "/")
		if name == "" {
			name = "index.html"
		}
		// fs.ValidPath refuses "..", so nothing outside the tree is named.
		body, err := fs.ReadFile(files, name)
		if !fs.ValidPath(name) || err != nil {
			http.NotFound(w, r)
			return
		}
		h := w.Header()
		h.Set("Content-Type", web.ContentType(name))
		// The page and its module change with the binary; revalidating is
		// cheap next to a stale app after an upgrade.
		h.Set("Cache-Control", "no-cache")
		// Own scripts and styles only, no framing, and API calls to this
		// origin alone: a session token in this page can go nowhere else.
		h.Set("Content-Security-Policy", web.PageCSP)
		h.Set("X-Frame-Options", "DENY")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		if r.Method == http.MethodHead {
			return
		}
		_, _ = w.Write(body)
	})
}
