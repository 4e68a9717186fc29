package observe

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"log/slog"
)

// TraceHeader carries the trace id on every response.
const TraceHeader = "X-Svc-Trace-Id"

type traceKey struct{}

// NewTraceID returns a fresh random trace id: 16 URL-safe characters.
func NewTraceID() string {
	var b [12]byte
	_, _ = rand.Read(b[:]) // crypto/rand never fails on Linux
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// WithTraceID returns ctx carrying id.
func WithTraceID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, traceKey{}, id)
}

// TraceID returns the trace id carried by ctx, or "".
func TraceID(ctx context.Context) string {
	id, _ := ctx.Value(traceKey{}).(string)
	return id
}

// LogHandler wraps an slog.Handler so that every record logged with a
// request context carries that request's trace_id.
type LogHandler struct{ slog.Handler }

// Handle adds trace_id when the context has one.
func (h LogHandler) Handle(ctx context.Context, r slog.Record) error {
	if id := TraceID(ctx); id != "" {
		r.AddAttrs(slog.String("trace_id", id))
	}
	return h.Handler.Handle(ctx, r)
}

// WithAttrs keeps the wrapper around derived handlers.
func (h LogHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return LogHandler{h.Handler.WithAttrs(attrs)}
}

// WithGroup keeps the wrapper around derived handlers.
func (h LogHandler) WithGroup(name string) slog.Handler {
	return LogHandler{h.Handler.WithGroup(name)}
}
