package pluginrt

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
	"github.com/svcplatform/svc/internal/plugin/protocol"
	"github.com/svcplatform/svc/internal/tracing"
)

// Call is one call a handler serves, as the gateway sent it.
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
	// answered runs once the call's answer is encoded (AfterAnswer).
	answered func()
}

// AfterAnswer has f run once the call's answer is encoded, or the call has
// failed: memory the answer was built from may then be reused. f replaces
// an earlier one.
func (c *Call) AfterAnswer(f func()) { c.answered = f }

// Answered runs the function AfterAnswer set, once.
func (c *Call) Answered() {
	if f := c.answered; f != nil {
		c.answered = nil
		f()
	}
}

// Procedure returns the called method, "/package.Service/Method".
func (c *Call) Procedure() string { return c.procedure }

// Principal returns the caller in its wire form; nil is the anonymous
// caller.
func (c *Call) Principal() *pluginv1.Principal { return c.principal }

// PageAccess returns the facts of the Page the method's access rule names,
// as the gateway read them to authorize the call; nil when it sent none.
func (c *Call) PageAccess() *pluginv1.PageAccessResponse { return c.page }

// TraceID returns the request's trace id.
func (c *Call) TraceID() string { return c.traceID }

// Logger returns the plugin's logger with the call's trace id and procedure.
func (c *Call) Logger() *slog.Logger {
	if c.log == nil {
		c.log = c.p.log.With("trace_id", c.traceID, "procedure", c.procedure)
	}
	return c.log
}

// Host returns a client of the gateway's Host service that acts for this
// call's caller while the call lasts.
func (c *Call) Host() *HostClient {
	return &HostClient{p: c.p, delegation: c.delegation, traceID: c.traceID}
}

func (p *Plugin) newCall(req *pluginv1.InvokeRequest) *Call {
	return &Call{p: p, procedure: req.GetProcedure(), principal: req.GetPrincipal(), traceID: req.GetTraceId(), delegation: req.GetDelegation(), page: req.GetPageAccess()}
}

// Invoke runs one unary call in this process exactly as the gateway's calls
// are run: decode, deadline, handler, encode, errors. It is the handler of
// both transports, gRPC and the fast lane, and the gateway calls it for its
// in-process services.
func (p *Plugin) Invoke(ctx context.Context, req *pluginv1.InvokeRequest) (resp *pluginv1.InvokeResponse) {
	p.trim.Touch()
	call := p.newCall(req)
	m := p.methods[call.procedure]
	if m == nil || m.Unary == nil {
		return &pluginv1.InvokeResponse{Error: p.unknown(call, m)}
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
	out, err := m.Unary(ctx, call, req.GetRequest())
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

// InvokeStream runs one server-streaming call, sending each message and,
// when the handler fails, a last response carrying the error.
func (p *Plugin) InvokeStream(ctx context.Context, req *pluginv1.InvokeRequest, send func(*pluginv1.InvokeResponse) error) (err error) {
	p.trim.Touch()
	call := p.newCall(req)
	m := p.methods[call.procedure]
	if m == nil || m.Stream == nil {
		return send(&pluginv1.InvokeResponse{Error: p.unknown(call, m)})
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
	herr := m.Stream(ctx, call, req.GetRequest(), func(b []byte) error {
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
		// The fast lane's context already ends at the call's deadline: a
		// second context would only add a timer per call.
		if cur, ok := ctx.Deadline(); !ok || cur.UnixNano() > d {
			return context.WithDeadline(ctx, time.Unix(0, d))
		}
	}
	return ctx, func() {}
}

// unknown refuses a call of a method the plugin has no handler of, or one
// made with the wrong kind of call.
func (p *Plugin) unknown(call *Call, m *Method) *pluginv1.Error {
	if m != nil {
		want := "Invoke"
		if m.Stream != nil {
			want = "InvokeStream"
		}
		return protocol.Refusal{HTTPStatus: http.StatusBadRequest, Code: 100, Type: protocol.TypeInvalid,
			Message: fmt.Sprintf("%s must be called with %s.", call.procedure, want)}.Proto()
	}
	return protocol.Refusal{HTTPStatus: http.StatusNotFound, Code: 2500, Type: protocol.TypeGraphMethod,
		Message: fmt.Sprintf("The %s plugin has no method %s.", p.name, call.procedure)}.Proto()
}

// panicked logs a handler's panic and answers an internal error.
func (p *Plugin) panicked(call *Call, r any) *pluginv1.Error {
	call.Logger().Error("handler panicked", "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
	return protocol.Refusal{HTTPStatus: http.StatusInternalServerError, Code: 1, Type: protocol.TypeInternal,
		Message: protocol.InternalMessage}.Proto()
}

type readReplicaKey struct{}

// WithReadReplica marks ctx as the gateway marks a call that may read a
// replica (sdk.WithReadReplica).
func WithReadReplica(ctx context.Context) context.Context {
	return context.WithValue(ctx, readReplicaKey{}, true)
}

// MayReadReplica reports whether ctx is marked by WithReadReplica
// (sdk.MayReadReplica).
func MayReadReplica(ctx context.Context) bool {
	ok, _ := ctx.Value(readReplicaKey{}).(bool)
	return ok
}
