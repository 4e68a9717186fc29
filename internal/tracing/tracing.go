// Package tracing turns on OpenTelemetry tracing for the gateway and its
// plugins when an operator asks for it, and costs nothing when not.
//
// One setting turns it on: the OTLP/HTTP endpoint the spans go to
// (SVC_TRACING_ENDPOINT, e.g. http://127.0.0.1:4318; the gateway also takes
// it from --tracing-endpoint or the config file, and hands it to its
// plugins, which hand their spans to the gateway over their Host socket
// rather than link an exporter: package otlp exports for all). A request
// then makes one trace: the gateway's server span, a client span per
// plugin call, the plugin's span for the call, and a span
// per SQL statement the plugin or the gateway runs. The trace id is the
// request's X-Svc-Trace-Id (and the fbtrace_id of an error), so the id a
// developer quotes finds the trace. A W3C traceparent sent by the client is
// joined rather than replaced.
package tracing

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// EnvEndpoint names the OTLP/HTTP endpoint; empty or unset leaves tracing
// off.
const EnvEndpoint = "SVC_TRACING_ENDPOINT"

// scope is the instrumentation scope of every span made here.
const scope = "github.com/svcplatform/svc"

// Enabled reports whether Setup turned tracing on in this process.
func Enabled() bool { return enabled }

var enabled bool

// CheckEndpoint refuses an endpoint that is not an http(s) URL with a host.
func CheckEndpoint(endpoint string) error {
	if endpoint == "" {
		return nil
	}
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("tracing endpoint %q: want an http:// or https:// URL of an OTLP/HTTP receiver", endpoint)
	}
	return nil
}

// Start turns tracing on in this process for service, its spans going to
// exp, and returns what flushes and stops it. Only the first Start of a
// process counts (the gateway's, before its in-process plugins'). The
// gateway exports over OTLP/HTTP (package otlp); a plugin hands its spans
// to the gateway (the plugin runtime's exporter), so that no plugin links
// an HTTP client for them.
func Start(service, version string, exp sdktrace.SpanExporter) (shutdown func(context.Context) error) {
	if enabled {
		return func(context.Context) error { return nil }
	}
	res := resource.NewSchemaless(attribute.String("service.name", service), attribute.String("service.version", version))
	tp := sdktrace.NewTracerProvider(
		sdktrace.WithBatcher(exp, sdktrace.WithBatchTimeout(time.Second)),
		sdktrace.WithResource(res),
		// A client's traceparent decides whether its trace is sampled;
		// everything else is.
		sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.AlwaysSample())),
	)
	otel.SetTracerProvider(tp)
	otel.SetTextMapPropagator(propagation.TraceContext{})
	enabled = true
	return tp.Shutdown
}

// FromEnv reports whether the gateway asked this plugin process for
// traces (it passes its endpoint in EnvEndpoint).
func FromEnv() bool { return os.Getenv(EnvEndpoint) != "" }

// Tracer is the tracer of this process.
func Tracer() trace.Tracer { return otel.Tracer(scope) }

// Inject returns the W3C traceparent of ctx's span, or "" when there is
// none (tracing off).
func Inject(ctx context.Context) string {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return ""
	}
	c := propagation.MapCarrier{}
	propagation.TraceContext{}.Inject(ctx, c)
	return c["traceparent"]
}

// Extract returns ctx carrying the remote span of a W3C traceparent (ctx
// itself when the value is empty or malformed).
func Extract(ctx context.Context, traceparent string) context.Context {
	if traceparent == "" {
		return ctx
	}
	return propagation.TraceContext{}.Extract(ctx, propagation.MapCarrier{"traceparent": traceparent})
}

// End ends span, marking it failed when err is not nil.
func End(span trace.Span, err error) {
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
}

// PgxTracer makes a span of each SQL statement run through a pool whose
// ConnConfig.Tracer it is. Statements outside a traced call (background
// work) make no span.
type PgxTracer struct{}

// TraceQueryStart implements pgx.QueryTracer.
func (PgxTracer) TraceQueryStart(ctx context.Context, _ *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return ctx
	}
	ctx, _ = Tracer().Start(ctx, statementName(data.SQL), trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(attribute.String("db.system.name", "postgresql"), attribute.String("db.query.text", data.SQL)))
	return ctx
}

// TraceQueryEnd implements pgx.QueryTracer: it ends the span
// TraceQueryStart put in ctx (a recording one only when it started one).
func (PgxTracer) TraceQueryEnd(ctx context.Context, _ *pgx.Conn, data pgx.TraceQueryEndData) {
	span := trace.SpanFromContext(ctx)
	if !span.IsRecording() {
		return
	}
	err := data.Err
	if errors.Is(err, pgx.ErrNoRows) {
		err = nil // an answer, not a failure
	}
	span.SetAttributes(attribute.Int64("db.response.returned_rows", data.CommandTag.RowsAffected()))
	End(span, err)
}

// statementName names a statement's span: the sqlc query name when the SQL
// carries one ("-- name: ListPostsFirst :many"), else its first word.
func statementName(sql string) string {
	s := strings.TrimSpace(sql)
	if rest, ok := strings.CutPrefix(s, "-- name: "); ok {
		if name, _, ok := strings.Cut(rest, " "); ok && name != "" {
			return "SQL " + name
		}
	}
	if word, _, _ := strings.Cut(s, " "); word != "" {
		return "SQL " + strings.ToUpper(word)
	}
	return "SQL"
}
