package dispatch

import (
	"context"
	"time"

	"github.com/svcplatform/svc/gateway/internal/host"
	"github.com/svcplatform/svc/gateway/internal/observe"
	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
	"github.com/svcplatform/svc/internal/plugin/wire"
	"github.com/svcplatform/svc/sdk"
)

// hostInvoker calls one plugin through the host, timing each call.
type hostInvoker struct {
	h      *host.Host
	plugin string
	calls  *observe.Calls
}

func (i hostInvoker) Invoke(ctx context.Context, req *pluginv1.InvokeRequest) (*pluginv1.InvokeResponse, error) {
	return i.InvokeInto(ctx, req, nil)
}

// InvokeInto reads an answer that comes over the fast lane into answer
// (route.AnswerInvoker).
func (i hostInvoker) InvokeInto(ctx context.Context, req *pluginv1.InvokeRequest, answer []byte) (*pluginv1.InvokeResponse, error) {
	start := time.Now()
	resp, err := i.h.InvokeInto(ctx, i.plugin, req, answer)
	i.calls.Observe(i.plugin, req.GetProcedure(), callOutcome(resp, err), start)
	return resp, err
}

func (i hostInvoker) InvokeStream(ctx context.Context, req *pluginv1.InvokeRequest, send func(*pluginv1.InvokeResponse) error) error {
	start := time.Now()
	refused := false
	err := i.h.InvokeStream(ctx, i.plugin, req, func(resp *pluginv1.InvokeResponse) error {
		refused = refused || resp.GetError() != nil
		return send(resp)
	})
	outcome := callOutcome(nil, err)
	if refused {
		outcome = observe.CallRefused
	}
	i.calls.Observe(i.plugin, req.GetProcedure(), outcome, start)
	return err
}

// callOutcome labels a call: a hop error failed it, an error in the
// answer is the plugin's refusal.
func callOutcome(resp *pluginv1.InvokeResponse, err error) string {
	switch {
	case err != nil:
		return observe.CallFailed
	case resp.GetError() != nil:
		return observe.CallRefused
	}
	return observe.CallOK
}

// localInvoker runs an in-process sdk.Plugin: the gateway's own services,
// timed as the plugin "core".
type localInvoker struct {
	p     *sdk.Plugin
	calls *observe.Calls
}

func (l localInvoker) Invoke(ctx context.Context, req *pluginv1.InvokeRequest) (*pluginv1.InvokeResponse, error) {
	start := time.Now()
	resp := wire.Invoke(ctx, l.p, req)
	l.calls.Observe("core", req.GetProcedure(), callOutcome(resp, nil), start)
	return resp, nil
}

func (l localInvoker) InvokeStream(ctx context.Context, req *pluginv1.InvokeRequest, send func(*pluginv1.InvokeResponse) error) error {
	return wire.InvokeStream(ctx, l.p, req, send)
}
