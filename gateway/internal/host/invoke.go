package host

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"connectrpc.com/connect"
	"go.opentelemetry.io/otel/attribute"
	otelcodes "go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/svcplatform/svc/gateway/internal/apierr"
	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
	"github.com/svcplatform/svc/internal/plugin/protocol"
	"github.com/svcplatform/svc/internal/plugin/wire"
	"github.com/svcplatform/svc/internal/tracing"
)

// Invoke runs one unary call on the process currently serving plugin. The
// error is the hop's: apierr.Unavailable when the plugin is not serving or
// its process failed during the call, a deadline error when ctx ended. The
// plugin's own refusal is the response's Error (wire.ErrorFromProto turns it into an error).
//
// When req carries no deadline, Invoke sets ctx's.
func (h *Host) Invoke(ctx context.Context, plugin string, req *pluginv1.InvokeRequest) (*pluginv1.InvokeResponse, error) {
	return h.InvokeInto(ctx, plugin, req, nil)
}

// InvokeInto is Invoke reading an answer that comes over the fast lane
// into answer's capacity (protocol.LaneClient.InvokeInto): the caller owns
// answer, and may reuse it once done with the response.
func (h *Host) InvokeInto(ctx context.Context, plugin string, req *pluginv1.InvokeRequest, answer []byte) (*pluginv1.InvokeResponse, error) {
	m := h.lookup(plugin)
	if m == nil {
		return nil, apierr.Internal(fmt.Errorf("no plugin named %q", plugin))
	}
	g := m.acquire()
	if g == nil {
		return nil, apierr.Unavailable(m.unavailable)
	}
	defer g.release()
	setDeadline(ctx, req)
	defer h.delegated.close(h.delegated.open(plugin, req))
	var span trace.Span
	if tracing.Enabled() {
		ctx, span = startCallSpan(ctx, plugin, req)
		defer span.End()
	}
	resp, err := g.lane.InvokeInto(ctx, req, answer)
	if err != nil {
		err = m.hopError(ctx, err)
		if span != nil {
			span.SetStatus(otelcodes.Error, err.Error())
		}
		return nil, err
	}
	return resp, nil
}

// startCallSpan starts the gateway's client span of a plugin call and puts
// its context in the request, so that the plugin's span is its child.
func startCallSpan(ctx context.Context, plugin string, req *pluginv1.InvokeRequest) (context.Context, trace.Span) {
	ctx, span := tracing.Tracer().Start(ctx, "plugin "+plugin+" "+strings.TrimPrefix(req.GetProcedure(), "/"),
		trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attribute.String("svc.plugin", plugin)))
	req.Traceparent = tracing.Inject(ctx)
	return ctx, span
}

// InvokeStream runs one server-streaming call and hands each response to
// recv, in order; a response carrying an Error ends the stream. It returns
// recv's error, or the hop's as Invoke does (unavailable too when the
// plugin's lane has as many streams open as it takes: protocol.ErrLaneBusy).
// When recv fails or ctx ends, the lane connection is closed, which cancels
// the plugin's handler.
func (h *Host) InvokeStream(ctx context.Context, plugin string, req *pluginv1.InvokeRequest, recv func(*pluginv1.InvokeResponse) error) error {
	m := h.lookup(plugin)
	if m == nil {
		return apierr.Internal(fmt.Errorf("no plugin named %q", plugin))
	}
	g := m.acquire()
	if g == nil {
		return apierr.Unavailable(m.unavailable)
	}
	defer g.release()
	setDeadline(ctx, req)
	defer h.delegated.close(h.delegated.open(plugin, req))
	if tracing.Enabled() {
		var span trace.Span
		ctx, span = startCallSpan(ctx, plugin, req)
		defer span.End()
	}
	var recvErr error
	err := g.lane.InvokeStream(ctx, req, func(resp *pluginv1.InvokeResponse) error {
		recvErr = recv(resp)
		return recvErr
	})
	switch {
	case err == nil, err == recvErr: // recv's own error passes through as it is
		return err
	case errors.Is(err, protocol.ErrLaneBusy):
		return apierr.Unavailable(m.unavailable).WithCause(fmt.Errorf("plugin %s: %w", m.name, err))
	}
	return m.hopError(ctx, err)
}

func setDeadline(ctx context.Context, req *pluginv1.InvokeRequest) {
	if req.GetDeadlineUnixNano() == 0 {
		if d, ok := ctx.Deadline(); ok {
			req.DeadlineUnixNano = d.UnixNano()
		}
	}
}

// hopError describes a failed hop to the caller.
func (m *managed) hopError(ctx context.Context, err error) error {
	cause := fmt.Errorf("plugin %s: %w", m.name, err)
	if ctxErr := ctx.Err(); ctxErr != nil {
		code := connect.CodeDeadlineExceeded
		if errors.Is(ctxErr, context.Canceled) {
			code = connect.CodeCanceled
		}
		return apierr.FromConnect(connect.NewError(code, ctxErr)).WithCause(cause)
	}
	return apierr.Unavailable(m.unavailable).WithCause(cause)
}

// ErrorProto is the wire form of a gateway error, for a HostServer's
// answers to plugins.
func ErrorProto(err error) *pluginv1.Error { return wire.ErrorToProto(apierr.From(err)) }
