package dispatch

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"google.golang.org/protobuf/proto"

	"github.com/svcplatform/svc/gateway/internal/apierr"
	"github.com/svcplatform/svc/gateway/internal/auth"
	"github.com/svcplatform/svc/gateway/internal/observe"
	"github.com/svcplatform/svc/gateway/internal/route"
	"github.com/svcplatform/svc/gateway/internal/serving"
	"github.com/svcplatform/svc/gateway/internal/validate"
	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
	"github.com/svcplatform/svc/internal/plugin/wire"
)

// Admit is the first step of every call of a method with access rule
// access (nil: a method not known yet, hence not public): a caller without
// a valid credential is refused (401) before the request's body,
// parameters or the method's own rules are looked at (CONTRACT §15). The
// entry points call it before they decode anything: the Graph handler once
// it knows the node, the server before the transcoder decodes a REST
// request's path, query or body, the Connect, gRPC and gRPC-Web handlers
// before reading the body. It costs a context lookup for a caller with a
// credential.
func (d *Dispatcher) Admit(ctx context.Context, access *pluginv1.Access) error {
	return auth.Admit(ctx, access)
}

// Call runs one unary call of m with an already decoded request: validate,
// authorize, invoke. raw, when not nil, is req's wire form and is forwarded
// as is.
func (d *Dispatcher) Call(ctx context.Context, m *route.Method, req proto.Message, raw []byte) ([]byte, error) {
	return d.CallInto(ctx, m, req, raw, nil)
}

// CallInto is Call reading the answer into answer's capacity when m's
// invoker can (route.AnswerInvoker): the bytes returned may then alias
// answer, which the caller owns and may reuse once done with them. A nil
// answer is Call.
func (d *Dispatcher) CallInto(ctx context.Context, m *route.Method, req proto.Message, raw, answer []byte) ([]byte, error) {
	ai, into := m.Invoker.(route.AnswerInvoker)
	into = into && answer != nil
	var ireq *pluginv1.InvokeRequest
	if into {
		// An AnswerInvoker is done with the request when it returns.
		ireq = invokeRequests.Get().(*pluginv1.InvokeRequest)
		defer releaseInvokeRequest(ireq)
	} else {
		ireq = new(pluginv1.InvokeRequest)
	}
	caller, err := d.prepare(ctx, m, req, raw, ireq)
	if err != nil {
		return nil, err
	}
	defer d.wrote(m, caller)
	var res *pluginv1.InvokeResponse
	if into {
		res, err = ai.InvokeInto(ctx, ireq, answer)
	} else {
		res, err = m.Invoker.Invoke(ctx, ireq)
	}
	if err != nil {
		return nil, err
	}
	if e := res.GetError(); e != nil {
		return nil, wire.ErrorFromProto(e)
	}
	return res.GetResponse(), nil
}

// Stream runs one server-streaming call of m with an already decoded
// request, handing each response message to send in order. raw, when not
// nil, is req's wire form. A refusal by the plugin, before or between
// messages, is returned as the platform's error. A stream lasts as long as
// its client wants, so it is ended when the gateway shuts down (503, code
// 2), for every protocol that streams: the shutdown need not wait for it.
func (d *Dispatcher) Stream(ctx context.Context, m *route.Method, req proto.Message, raw []byte, send func([]byte) error) error {
	si, ok := m.Invoker.(route.StreamInvoker)
	if !ok {
		return apierr.Internal(fmt.Errorf("plugin %s cannot stream", m.Plugin))
	}
	ireq := new(pluginv1.InvokeRequest) // a stream's outlives no call, but is rare
	caller, err := d.prepare(ctx, m, req, raw, ireq)
	if err != nil {
		return err
	}
	defer d.wrote(m, caller)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var shutdown atomic.Bool
	if closing := serving.Closing(ctx); closing != nil {
		stop := context.AfterFunc(closing, func() {
			shutdown.Store(true)
			cancel()
		})
		defer stop()
	}
	err = si.InvokeStream(ctx, ireq, func(res *pluginv1.InvokeResponse) error {
		if e := res.GetError(); e != nil {
			return wire.ErrorFromProto(e)
		}
		return send(res.GetResponse())
	})
	if err != nil && shutdown.Load() {
		return apierr.Unavailable("This gateway (shutting down)")
	}
	return err
}

// prepare validates and authorizes a call, counts it against its method's
// per-user rate, and builds the plugin request into ireq, an empty one:
// the one place where the caller and the Page facts take their wire form.
func (d *Dispatcher) prepare(ctx context.Context, m *route.Method, req proto.Message, raw []byte, ireq *pluginv1.InvokeRequest) (*auth.Principal, error) {
	if err := validate.Check(req); err != nil {
		return nil, err
	}
	caller, facts, err := d.authorize(ctx, m.Access, req)
	if err != nil {
		return nil, err
	}
	if m.UserRatePerMinute > 0 && caller != nil && caller.UserID != "" {
		if err := d.rates.Allow(m.Procedure, caller.UserID, m.UserRatePerMinute); err != nil {
			return nil, err
		}
	}
	if raw == nil {
		if raw, err = marshalRequest(req); err != nil {
			return nil, apierr.Internal(err)
		}
	}
	ireq.Procedure = m.Procedure
	ireq.Request = raw
	ireq.Principal = caller.Proto()
	ireq.TraceId = observe.TraceID(ctx)
	ireq.PageAccess = facts
	if dl, ok := ctx.Deadline(); ok {
		ireq.DeadlineUnixNano = dl.UnixNano()
	}
	if m.ReadOnly && !m.PrimaryOnly && d.reads != nil {
		ireq.ReadReplica = d.reads.MayRead(caller)
	}
	return caller, nil
}

// invokeRequests are the plugin requests of the calls CallInto makes
// through an AnswerInvoker (a plugin's fast lane), which is done with a
// request when it returns (the lane has encoded it), so they are reused:
// about 200 bytes of every Graph read.
var invokeRequests = sync.Pool{New: func() any { return new(pluginv1.InvokeRequest) }}

// releaseInvokeRequest empties ireq, dropping what it points to, and
// returns it to invokeRequests.
func releaseInvokeRequest(ireq *pluginv1.InvokeRequest) {
	ireq.Reset()
	invokeRequests.Put(ireq)
}

// authorize applies the method's access rule to the caller in ctx and the
// target req names. It returns the caller the plugin sees (nil:
// anonymous) and, when the rule names a Page, the facts of that Page the
// check read, in the form the call carries them (auth.AuthorizeFacts).
func (d *Dispatcher) authorize(ctx context.Context, access *pluginv1.Access, req proto.Message) (*auth.Principal, *pluginv1.PageAccessResponse, error) {
	if access.GetPublic() {
		// A public method ignores a bad credential; a good one is passed on.
		return auth.FromContext(ctx), nil, nil
	}
	p, err := auth.Caller(ctx)
	if err != nil {
		return nil, nil, err
	}
	facts, err := d.auth.AuthorizeFacts(ctx, p, access, auth.TargetOf(req, access))
	if err != nil {
		return nil, nil, err
	}
	return p, facts, nil
}

// wrote tells the read router that a call with side effects has ended,
// whatever its outcome (a refused call may still have committed something).
func (d *Dispatcher) wrote(m *route.Method, caller *auth.Principal) {
	if !m.ReadOnly && d.reads != nil {
		d.reads.Wrote(caller)
	}
}
