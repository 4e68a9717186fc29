package openapi

import (
	"encoding/json"
	"net/http"
	"sync"

	"github.com/svcplatform/svc/gateway/internal/apierr"
	"github.com/svcplatform/svc/gateway/internal/route"
)

// Path is where the document is served.
const Path = "/api/v1/openapi.json"

// Reference builds the document of the route table in use and keeps it
// until the table changes: one build per route-table generation.
type Reference struct {
	info     Info
	table    func() *route.Table
	compiled []Compiled

	mu     sync.Mutex
	cached *route.Table
	built  bool
	doc    *Document
	body   []byte
}

// New returns the reference of table (the route table in use) and the
// compiled-in services.
func New(info Info, table func() *route.Table, compiled []Compiled) *Reference {
	return &Reference{info: info, table: table, compiled: compiled}
}

// Current is the document of the table in use and its JSON.
func (r *Reference) Current() (*Document, []byte) {
	t := r.table()
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.built || r.cached != t {
		doc := Build(r.info, t, r.compiled)
		body, err := json.Marshal(doc)
		if err != nil {
			// Every value is a plain struct, map or string: this cannot fail.
			panic(err)
		}
		r.cached, r.built, r.doc, r.body = t, true, doc, body
	}
	return r.doc, r.body
}

// ServeHTTP answers GET with the document.
func (r *Reference) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	_, body := r.Current()
	// no-cache: the document follows the route table, so caches revalidate.
	apierr.WriteJSONBody(w, http.StatusOK, body, apierr.CacheControl("no-cache"))
}
