package gateway

import (
	"context"
	"sync/atomic"

	"google.golang.org/protobuf/proto"

	"github.com/svcplatform/svc/gateway/internal/apierr"
	"github.com/svcplatform/svc/gateway/internal/auth"
	"github.com/svcplatform/svc/gateway/internal/dispatch"
	"github.com/svcplatform/svc/gateway/internal/route"
	"github.com/svcplatform/svc/internal/plugin/manifestcheck"
)

// callPath is the dispatcher as the edges that call plugins by what they
// declare use it (openai.Dispatcher and openai.Metrics, coregraph.Plugins):
// calls by procedure, and the methods of the route table in use that
// declare edge options, indexed once per table.
//
// It is the one part built before what it stands for: the gateway's own
// nodes (coregraph) call plugins through the dispatcher that serves them,
// so d is set once the dispatcher is built, before anything is served.
type callPath struct {
	d     *dispatch.Dispatcher
	index atomic.Pointer[declared]
}

// declared is what the methods of one route table declare of the edge.
type declared struct {
	table *route.Table
	// paths are the methods bound to plain HTTP paths, by verb and path.
	paths map[string]map[string]*manifestcheck.Method
	// edges are the methods declaring any edge option, by procedure.
	edges []*manifestcheck.Method
}

// declared indexes the route table in use, once per table.
func (c *callPath) declared() *declared {
	t := c.d.Table()
	if x := c.index.Load(); x != nil && x.table == t {
		return x
	}
	x := &declared{table: t, paths: map[string]map[string]*manifestcheck.Method{}}
	if t != nil {
		for _, m := range t.Methods() {
			e := m.Edge
			if e == nil {
				continue
			}
			x.edges = append(x.edges, m.Method)
			if e.Path != "" {
				if x.paths[e.Verb] == nil {
					x.paths[e.Verb] = map[string]*manifestcheck.Method{}
				}
				x.paths[e.Verb][e.Path] = m.Method
			}
		}
	}
	c.index.Store(x)
	return x
}

// HTTPPath finds the method bound to verb and path.
func (c *callPath) HTTPPath(verb, path string) (*manifestcheck.Method, bool) {
	m, ok := c.declared().paths[verb][path]
	return m, ok
}

// Declaring lists the methods whose edge options f accepts.
func (c *callPath) Declaring(f func(*manifestcheck.Edge) bool) []*manifestcheck.Method {
	var out []*manifestcheck.Method
	for _, m := range c.declared().edges {
		if f(m.Edge) {
			out = append(out, m)
		}
	}
	return out
}

// method finds procedure in the table in use.
func (c *callPath) method(procedure string) (*route.Method, error) {
	if t := c.d.Table(); t != nil {
		if m, ok := t.Method(procedure); ok {
			return m, nil
		}
	}
	return nil, apierr.Unavailable("The plugin serving " + procedure)
}

// Call runs one unary call of procedure as the context's caller.
func (c *callPath) Call(ctx context.Context, procedure string, req proto.Message) ([]byte, error) {
	m, err := c.method(procedure)
	if err != nil {
		return nil, err
	}
	return c.d.Call(ctx, m, req, nil) // the dispatcher encodes req
}

// Stream runs one server-streaming call of procedure as the context's
// caller.
func (c *callPath) Stream(ctx context.Context, procedure string, req proto.Message, send func([]byte) error) error {
	m, err := c.method(procedure)
	if err != nil {
		return err
	}
	return c.d.Stream(ctx, m, req, nil, send)
}

// CallJSON calls procedure as caller, request and answer in protojson.
func (c *callPath) CallJSON(ctx context.Context, caller *auth.Principal, procedure string, req []byte) ([]byte, bool, error) {
	return c.d.CallJSON(ctx, caller, procedure, req)
}
