package web

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"net/http"
	"path"
	"strings"
)

// Prefix is the path under which the shared assets are served.
const Prefix = "/assets/ui/"

//go:embed assets
var assets embed.FS

// Assets returns the embedded shared assets (ui.css, api.js, the pages'
// icon favicon.svg, …).
func Assets() fs.FS {
	sub, err := fs.Sub(assets, "assets")
	if err != nil {
		panic(err) // the embedded folder exists at build time
	}
	return sub
}

// Handler serves files of fsys (a flat folder of .js, .css and .svg files) by
// name, with a strong ETag derived from the content, so browsers revalidate
// instead of running stale code after an upgrade. Anything else is 404.
func Handler(fsys fs.FS) http.Handler {
	type file struct {
		body  []byte
		etag  string
		ctype string
	}
	files := map[string]file{}
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		panic(err)
	}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		b, err := fs.ReadFile(fsys, e.Name())
		if err != nil {
			panic(err)
		}
		sum := sha256.Sum256(b)
		files[e.Name()] = file{body: b, etag: `"` + hex.EncodeToString(sum[:8]) + `"`, ctype: ContentType(e.Name())}
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := r.URL.Path[strings.LastIndexByte(r.URL.Path, '/')+1:]
		f, ok := files[name]
		if !ok || (r.Method != http.MethodGet && r.Method != http.MethodHead) {
			http.NotFound(w, r)
			return
		}
		h := w.Header()
		h.Set("Content-Type", f.ctype)
		h.Set("Cache-Control", "no-cache")
		h.Set("ETag", f.etag)
		h.Set("X-Content-Type-Options", "nosniff")
		if r.Header.Get("If-None-Match") == f.etag {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		_, _ = w.Write(f.body)
	})
}

// ContentType is the Content-Type of an asset or page, by its file name's
// extension.
func ContentType(name string) string {
	switch path.Ext(name) {
	case ".html":
		return "text/html; charset=utf-8"
	case ".js":
		return "text/javascript; charset=utf-8"
	case ".css":
		return "text/css; charset=utf-8"
	case ".svg":
		return "image/svg+xml"
	}
	return "application/octet-stream"
}

// PageCSP is the Content-Security-Policy of an app page: scripts and
// styles only from the gateway itself (no inline script), requests only to
// the gateway, never framed, forms posted only to the gateway.
const PageCSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// SetPageHeaders sets the security headers of an app page: the same as the
// login and consent pages (no framing, no caching, no sniffing), with
// PageCSP. The referrer policy is same-origin rather than the login page's
// no-referrer: under no-referrer a browser sends "Origin: null" on the
// page's own POST requests, which an Origin check must refuse.
func SetPageHeaders(h http.Header) {
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Security-Policy", PageCSP)
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "same-origin")
}
