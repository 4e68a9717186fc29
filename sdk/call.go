package sdk

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strings"
	"time"

	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
	"github.com/svcplatform/svc/internal/tracing"
)

// Call is what a handler knows of the call it serves, beyond the request.
type Call struct {
	p         *Plugin
	procedure string
	principal *pluginv1.Principal
	traceID   string
	// delegation is the gateway's handle on this call, handed back on Host
	// calls so that they act as this call's caller.
	delegation string
	// page is the target Page's facts the gateway read to authorize the
	// call, when the method's access rule names a Page.
	page *pluginv1.PageAccessResponse
	log  *slog.Logger
}

// Procedure returns the called method, "/package.Service/Method".
func (c *Call) Procedure() string { return c.procedure }

// Principal returns the caller, authorized by the gateway for this method.
func (c *Call) Principal() Principal { return principalFromProto(c.principal) }

// PageAccess returns what the gateway knew of the Page pageID for this
// call's caller when it authorized the call (the Page the method's access
// rule names), so that a handler need not ask the host again; ok is false
// when the gateway sent no facts of that Page, and then
// Host().PageAccess asks. The facts are at most as old as the gateway's
// credential cache (2 s) and fresh after a change made through that
// gateway.
func (c *Call) PageAccess(pageID string) (a *PageAccess, ok bool) {
	if c.page == nil || !c.page.GetPageExists() || c.page.GetPageId() != pageID {
		return nil, false
	}
	return pageAccessFromProto(c.page), true
}

// TraceID returns the request's trace id, the fbtrace_id the caller sees in
// errors.
func (c *Call) TraceID() string { return c.traceID }

// Logger returns the plugin's logger with the call's trace id and procedure.
func (c *Call) Logger() *slog.Logger {
	if c.log == nil {
		c.log = c.p.log.With("trace_id", c.traceID, "procedure", c.procedure)
	}
	return c.log
}

// Host returns a client of the gateway's Host service that acts for this
// call's caller, while the call lasts, and carries its trace id. The
// gateway applies the called method's access rule to that caller. After
// the call has returned (work a handler left running), the client acts as
// the plugin itself, as Plugin.Host does.
func (c *Call) Host() *HostClient {
	return &HostClient{p: c.p, delegation: c.delegation, traceID: c.traceID}
}

// invoke runs one unary call; it is the handler of both transports, gRPC and
// the fast lane.
func (p *Plugin) invoke(ctx context.Context, req *pluginv1.InvokeRequest) (resp *pluginv1.InvokeResponse) {
	p.trim.Touch()
	call := &Call{p: p, procedure: req.GetProcedure(), principal: req.GetPrincipal(), traceID: req.GetTraceId(), delegation: req.GetDelegation(), page: req.GetPageAccess()}
	m := p.methods[call.procedure]
	if m == nil || m.unary == nil {
		return &pluginv1.InvokeResponse{Error: errorToProto(p.unknown(call, m))}
	}
	ctx, cancel := callContext(ctx, req)
	defer cancel()
	ctx, span := startSpan(ctx, req)
	defer func() {
		if r := recover(); r != nil {
			resp = &pluginv1.InvokeResponse{Error: p.panicked(call, r)}
		}
		if span != nil {
			if e := resp.GetError(); e != nil {
				span.SetStatus(codes.Error, e.GetMessage())
			}
			span.End()
		}
	}()
	out, err := m.unary(ctx, call, req.GetRequest())
	if err != nil {
		return &pluginv1.InvokeResponse{Error: p.refuse(call, err)}
	}
	return &pluginv1.InvokeResponse{Response: out}
}

// startSpan starts the plugin's span of a call when tracing is on and the
// gateway sent the call's trace context; span is nil otherwise.
func startSpan(ctx context.Context, req *pluginv1.InvokeRequest) (context.Context, trace.Span) {
	if !tracing.Enabled() || req.GetTraceparent() == "" {
		return ctx, nil
	}
	ctx = tracing.Extract(ctx, req.GetTraceparent())
	return tracing.Tracer().Start(ctx, strings.TrimPrefix(req.GetProcedure(), "/"), trace.WithSpanKind(trace.SpanKindServer))
}

// invokeStream runs one streaming call, sending each message and, when the
// handler fails, a last response carrying the error.
func (p *Plugin) invokeStream(ctx context.Context, req *pluginv1.InvokeRequest, send func(*pluginv1.InvokeResponse) error) (err error) {
	p.trim.Touch()
	call := &Call{p: p, procedure: req.GetProcedure(), principal: req.GetPrincipal(), traceID: req.GetTraceId(), delegation: req.GetDelegation(), page: req.GetPageAccess()}
	m := p.methods[call.procedure]
	if m == nil || m.stream == nil {
		return send(&pluginv1.InvokeResponse{Error: errorToProto(p.unknown(call, m))})
	}
	ctx, cancel := callContext(ctx, req)
	defer cancel()
	ctx, span := startSpan(ctx, req)
	if span != nil {
		defer span.End()
	}
	var sendErr error
	defer func() {
		if r := recover(); r != nil {
			err = send(&pluginv1.InvokeResponse{Error: p.panicked(call, r)})
		}
	}()
	herr := m.stream(ctx, call, req.GetRequest(), func(b []byte) error {
		if sendErr = send(&pluginv1.InvokeResponse{Response: b}); sendErr != nil {
			return fmt.Errorf("send: %w", sendErr)
		}
		return nil
	})
	if sendErr != nil {
		return sendErr // the gateway is gone; nobody reads an error
	}
	if herr != nil {
		return send(&pluginv1.InvokeResponse{Error: p.refuse(call, herr)})
	}
	return nil
}

// callContext applies the gateway's deadline to the handler's context and
// carries its read-replica decision (MayReadReplica).
func callContext(ctx context.Context, req *pluginv1.InvokeRequest) (context.Context, context.CancelFunc) {
	if req.GetReadReplica() {
		ctx = WithReadReplica(ctx)
	}
	if d := req.GetDeadlineUnixNano(); d > 0 {
		return context.WithDeadline(ctx, time.Unix(0, d))
	}
	return ctx, func() {}
}

func (p *Plugin) unknown(call *Call, m *method) *Error {
	if m != nil {
		want := "Invoke"
		if m.stream != nil {
			want = "InvokeStream"
		}
		return Errorf(http.StatusBadRequest, 100, 0, "%s must be called with %s.", call.procedure, want)
	}
	return &Error{HTTPStatus: http.StatusNotFound, Code: 2500, Type: TypeGraphMethod,
		Message: fmt.Sprintf("The %s plugin has no method %s.", p.info.Name, call.procedure)}
}

// refuse turns a handler's error into its wire form, logging plugin faults.
func (p *Plugin) refuse(call *Call, err error) *pluginv1.Error {
	e, fault := asError(err)
	if fault {
		call.Logger().Error("call failed", "error", err)
	}
	return errorToProto(e)
}

func (p *Plugin) panicked(call *Call, r any) *pluginv1.Error {
	call.Logger().Error("handler panicked", "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
	return errorToProto(Internal(fmt.Errorf("panic: %v", r)))
}

type readReplicaKey struct{}

// WithReadReplica marks ctx as the gateway marks a call that may read a
// replica: for tests of handlers, and for in-process callers that make the
// same decision themselves.
func WithReadReplica(ctx context.Context) context.Context {
	return context.WithValue(ctx, readReplicaKey{}, true)
}

// MayReadReplica reports whether the gateway let the call being served read
// from a read replica: the method has no side effects, a healthy replica is
// configured, and it has replayed the caller's own last write. Outside a
// call (background work) it is false. internal/readpool uses it to choose
// a pool.
func MayReadReplica(ctx context.Context) bool {
	ok, _ := ctx.Value(readReplicaKey{}).(bool)
	return ok
}
