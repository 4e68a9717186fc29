package gateway

import (
	"context"

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
// declare edge options (indexed by the table when it is built).
//
// It is the one part built before what it stands for: the gateway's own
// nodes (coregraph) call plugins through the dispatcher that serves them,
// so d is set once the dispatcher is built, before anything is served.
type callPath struct {
	d *dispatch.Dispatcher
}

// HTTPPath finds the method bound to verb and path.
func (c *callPath) HTTPPath(verb, path string) (*manifestcheck.Method, bool) {
	if t := c.d.Table(); t != nil {
		if m, ok := t.HTTPPath(verb, path); ok {
			return m.Method, true
		}
	}
	return nil, false
}

// Declaring lists the methods whose edge options f accepts.
func (c *callPath) Declaring(f func(*manifestcheck.Edge) bool) []*manifestcheck.Method {
	t := c.d.Table()
	if t == nil {
		return nil
	}
	var out []*manifestcheck.Method
	for _, m := range t.Declaring(f) {
		out = append(out, m.Method)
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
