package graph

import (
	"sort"
	"sync"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/svcplatform/svc/gateway/internal/route"
	"github.com/svcplatform/svc/internal/plugin/manifestcheck"
)

// binding ties a node pattern and an HTTP method to a route method.
type binding struct {
	pattern *manifestcheck.Pattern
	method  *route.Method
	// answer renders the method's response from its wire bytes; nil when
	// its shape needs the decoding path.
	answer *wireAnswer
	// requests recycles the method's request messages.
	requests *requestPool
}

// Router matches node paths against the Graph bindings of one route table.
// It is built once per table, before the table is in use (Handler.Prepare),
// so a request never builds it.
type Router struct {
	table *route.Table
	// byVerb holds bindings per HTTP method, most specific first.
	byVerb map[string][]binding
}

// NewRouter indexes the Graph node bindings of table t, which route.Build
// compiled and checked (manifestcheck: patterns well formed, no node bound
// twice), and compiles each method's wire renderer.
func NewRouter(t *route.Table) *Router {
	r := &Router{table: t, byVerb: map[string][]binding{}}
	for _, m := range t.Methods() {
		if len(m.Nodes) == 0 {
			continue
		}
		answer := compileAnswer(m.Output.Descriptor())
		requests := &requestPool{typ: m.Input}
		for _, n := range m.Nodes {
			r.byVerb[n.Verb] = append(r.byVerb[n.Verb], binding{pattern: n.Pattern, method: m, answer: answer, requests: requests})
		}
	}
	for _, bs := range r.byVerb {
		sort.SliceStable(bs, func(i, j int) bool { return bs[i].pattern.Literals() > bs[j].pattern.Literals() })
	}
	return r
}

// Table is the route table the router was compiled from.
func (r *Router) Table() *route.Table { return r.table }

// match finds the binding for verb and node segments. found reports whether
// the node exists for some other verb (so the error can say "unsupported
// method" rather than "unknown node").
func (r *Router) match(verb string, segs []string) (b binding, vars manifestcheck.NodeVars, ok, existsOtherwise bool) {
	for _, cand := range r.byVerb[verb] {
		if v, hit := cand.pattern.Match(segs); hit {
			return cand, v, true, false
		}
	}
	for other, bs := range r.byVerb {
		if other == verb {
			continue
		}
		for _, cand := range bs {
			if _, hit := cand.pattern.Match(segs); hit {
				return binding{}, manifestcheck.NodeVars{}, false, true
			}
		}
	}
	return binding{}, manifestcheck.NodeVars{}, false, false
}

// requestPool recycles one method's request messages. A Graph call binds
// one, the dispatcher validates, authorizes and encodes it, and nothing
// holds it once the call has returned, so the next call reuses it and its
// maps instead of making a dynamic message anew.
type requestPool struct {
	typ  protoreflect.MessageType
	pool sync.Pool
}

func (p *requestPool) get() protoreflect.Message {
	if m, ok := p.pool.Get().(protoreflect.Message); ok {
		return m
	}
	return p.typ.New()
}

// put clears m and keeps it for the next call. A binding sets only the
// request's own fields, so those are cleared one by one (Range's closure
// would be an allocation per call); a type with extensions is ranged.
func (p *requestPool) put(m protoreflect.Message) {
	md := m.Descriptor()
	if md.ExtensionRanges().Len() > 0 {
		m.Range(func(fd protoreflect.FieldDescriptor, _ protoreflect.Value) bool {
			m.Clear(fd)
			return true
		})
	} else {
		fds := md.Fields()
		for i := range fds.Len() {
			if fd := fds.Get(i); m.Has(fd) {
				m.Clear(fd)
			}
		}
	}
	if len(m.GetUnknown()) > 0 {
		m.SetUnknown(nil)
	}
	p.pool.Put(m)
}
