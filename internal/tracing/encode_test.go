package tracing

import (
	"bytes"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
)

func TestAPluginsSpansReachTheGatewayWithTheirIDsParentStatusAndService(t *testing.T) {
	tid := trace.TraceID{1, 2, 3}
	parent := trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: trace.SpanID{9}, Remote: true})
	start := time.Unix(100, 5)
	span := tracetest.SpanStub{
		Name:        "svc.book.v1.BookService/ListPosts",
		SpanContext: trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: trace.SpanID{7}, TraceFlags: trace.FlagsSampled}),
		Parent:      parent, SpanKind: trace.SpanKindServer,
		StartTime: start, EndTime: start.Add(time.Millisecond),
		Attributes: []attribute.KeyValue{attribute.String("db.statement", "ListPosts"), attribute.Int64("rows", 3)},
		Status:     sdktrace.Status{Code: codes.Error, Description: "boom"},
		Resource:   resource.NewSchemaless(attribute.String("service.name", "book")),
	}.Snapshot()

	d := Encode([]sdktrace.ReadOnlySpan{span})
	rs := d.GetResourceSpans()
	if len(rs) != 1 || rs[0].GetResource().GetAttributes()[0].GetValue().GetStringValue() != "book" {
		t.Fatalf("resource = %v", rs)
	}
	got := rs[0].GetScopeSpans()[0].GetSpans()[0]
	if !bytes.Equal(got.GetTraceId(), tid[:]) || got.GetSpanId()[0] != 7 || got.GetParentSpanId()[0] != 9 {
		t.Errorf("ids = %x %x parent %x", got.GetTraceId(), got.GetSpanId(), got.GetParentSpanId())
	}
	if got.GetKind() != tracepb.Span_SPAN_KIND_SERVER || got.GetStartTimeUnixNano() != uint64(start.UnixNano()) {
		t.Errorf("kind %v start %d", got.GetKind(), got.GetStartTimeUnixNano())
	}
	// OpenTelemetry's Error is 1, OTLP's 2.
	if got.GetStatus().GetCode() != tracepb.Status_STATUS_CODE_ERROR || got.GetStatus().GetMessage() != "boom" {
		t.Errorf("status = %v", got.GetStatus())
	}
	if a := got.GetAttributes(); len(a) != 2 || a[0].GetValue().GetStringValue() != "ListPosts" || a[1].GetValue().GetIntValue() != 3 {
		t.Errorf("attributes = %v", a)
	}
}
