package graph

import (
	"fmt"
	"net/http"
	"sort"

	"github.com/svcplatform/svc/gateway/internal/route"
)

// binding ties a node pattern and an HTTP method to a route method.
type binding struct {
	pattern *Pattern
	method  *route.Method
	// answer renders the method's response from its wire bytes; nil when
	// its shape needs the decoding path.
	answer *wireAnswer
}

// Router matches node paths against the Graph bindings of one route table.
// It is compiled once, when the table is built (dispatch publishes the two
// together), so a request never compiles it.
type Router struct {
	table *route.Table
	// byVerb holds bindings per HTTP method, most specific first.
	byVerb map[string][]binding
}

// NewRouter compiles the Graph node bindings of table t. It fails when the
// table's plugins claim one node twice or bind a malformed pattern, so that
// the reload that brought the table fails and traffic stays on the table in
// use, instead of failing requests afterwards.
func NewRouter(t *route.Table) (*Router, error) {
	r := &Router{table: t, byVerb: map[string][]binding{}}
	shapes := map[string]string{}
	for _, m := range t.Methods() {
		g := m.Graph
		if g == nil {
			continue
		}
		answer := compileAnswer(m.Output.Descriptor())
		for _, b := range [][2]string{{http.MethodGet, g.GetGet()}, {http.MethodPost, g.GetPost()}, {http.MethodDelete, g.GetDelete()}} {
			if b[1] == "" {
				continue
			}
			p, err := CompilePattern(b[1])
			if err != nil {
				return nil, fmt.Errorf("%s: %w", m.Procedure, err)
			}
			key := b[0] + " " + p.shape()
			if prev, dup := shapes[key]; dup {
				return nil, fmt.Errorf("graph node %s %s is bound by both %s and %s", b[0], b[1], prev, m.Procedure)
			}
			shapes[key] = m.Procedure
			r.byVerb[b[0]] = append(r.byVerb[b[0]], binding{pattern: p, method: m, answer: answer})
		}
	}
	for _, bs := range r.byVerb {
		sort.SliceStable(bs, func(i, j int) bool { return bs[i].pattern.literals() > bs[j].pattern.literals() })
	}
	return r, nil
}

// Table is the route table the router was compiled from; calls it matches
// go through it.
func (r *Router) Table() *route.Table { return r.table }

// match finds the binding for verb and node segments. found reports whether
// the node exists for some other verb (so the error can say "unsupported
// method" rather than "unknown node").
func (r *Router) match(verb string, segs []string) (b binding, vars map[string]string, ok, existsOtherwise bool) {
	for _, cand := range r.byVerb[verb] {
		if v, hit := cand.pattern.match(segs); hit {
			return cand, v, true, false
		}
	}
	for other, bs := range r.byVerb {
		if other == verb {
			continue
		}
		for _, cand := range bs {
			if _, hit := cand.pattern.match(segs); hit {
				return binding{}, nil, false, true
			}
		}
	}
	return binding{}, nil, false, false
}
