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

// Request is what an HTTP request's context carries for the code serving
// it: its trace id and where the access line's notes go. The server keeps
// one per request, in memory it allocates anyway, and gives the context
// both with one value (WithRequest): a value per fact was an allocation
// each, and each lookup walked past the others.
type Request struct {
	TraceID string
	// Access receives the handlers' notes (NoteNode, NoteErrorCode); nil
	// while the access log is off, and the notes are then dropped.
	Access *Access
}

// WithRequest returns ctx carrying rq: its trace id, and its notes. A
// trace id given later (WithTraceID) replaces both for what runs under it.
func WithRequest(ctx context.Context, rq *Request) context.Context {
	return context.WithValue(ctx, traceKey{}, rq)
}

// TraceID returns the trace id carried by ctx, or "".
func TraceID(ctx context.Context) string {
	switch v := ctx.Value(traceKey{}).(type) {
	case *Request:
		return v.TraceID
	case string:
		return v
	}
	return ""
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
