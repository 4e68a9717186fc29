package tracing

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel/trace"
)

func TestAStatementSpanIsNamedAfterItsSqlcQuery(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"-- name: ListPostsFirst :many\nSELECT 1": "SQL ListPostsFirst",
		"  select * from book.posts":              "SQL SELECT",
		"":                                        "SQL",
		"-- name: ":                               "SQL --",
	}
	for sql, want := range cases {
		if got := statementName(sql); got != want {
			t.Errorf("statementName(%q) = %q, want %q", sql, got, want)
		}
	}
}

func TestTheEndpointMustBeAnHTTPURLWithAHost(t *testing.T) {
	t.Parallel()
	for endpoint, ok := range map[string]bool{
		"": true, "http://127.0.0.1:4318": true, "https://otel.example.com": true,
		"localhost:4318": false, "grpc://x:4317": false, "http://": false, "::": false,
	} {
		if err := CheckEndpoint(endpoint); (err == nil) != ok {
			t.Errorf("CheckEndpoint(%q) = %v", endpoint, err)
		}
	}
}

func TestATraceparentCrossesTheHopUnchanged(t *testing.T) {
	t.Parallel()
	const tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	ctx := Extract(context.Background(), tp)
	sc := trace.SpanContextFromContext(ctx)
	if sc.TraceID().String() != "4bf92f3577b34da6a3ce929d0e0e4736" || sc.SpanID().String() != "00f067aa0ba902b7" || !sc.IsSampled() {
		t.Fatalf("extracted %v", sc)
	}
	if got := Inject(ctx); got != tp {
		t.Fatalf("Inject = %q, want %q", got, tp)
	}
	if got := Inject(context.Background()); got != "" {
		t.Fatalf("Inject without a span = %q", got)
	}
	if ctx := Extract(context.Background(), "garbage"); trace.SpanContextFromContext(ctx).IsValid() {
		t.Fatal("a malformed traceparent made a span context")
	}
}
