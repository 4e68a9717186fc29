// Package otlp exports the gateway's traces over OTLP/HTTP, its own spans
// and those its plugins hand it (Forward): only the gateway links an HTTP
// exporter.
package otlp

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"

	"github.com/svcplatform/svc/internal/tracing"
)

// Setup turns tracing on for service when endpoint is set, exporting to
// the OTLP/HTTP receiver at endpoint, and returns what flushes and stops
// it. With no endpoint it does nothing: the global tracer provider stays
// OpenTelemetry's no-op one.
func Setup(ctx context.Context, service, version, endpoint string) (shutdown func(context.Context) error, err error) {
	if endpoint == "" || tracing.Enabled() {
		return func(context.Context) error { return nil }, nil
	}
	if err := tracing.CheckEndpoint(endpoint); err != nil {
		return nil, err
	}
	url := strings.TrimRight(endpoint, "/") + "/v1/traces"
	exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(url))
	if err != nil {
		return nil, fmt.Errorf("tracing: %w", err)
	}
	tracesURL.Store(&url)
	return tracing.Start(service, version, exp), nil
}

var tracesURL atomic.Pointer[string]

var client = &http.Client{Timeout: 10 * time.Second}

// Forward posts a plugin's spans (an OTLP TracesData, tracing.Encode) to
// the receiver Setup was given; without one it drops them.
func Forward(ctx context.Context, body []byte) error {
	url := tracesURL.Load()
	if url == nil {
		return nil
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, *url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-protobuf")
	res, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("forward plugin spans: %w", err)
	}
	defer func() { _ = res.Body.Close() }()
	_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 64<<10))
	if res.StatusCode/100 != 2 {
		return fmt.Errorf("forward plugin spans: the receiver answered %s", res.Status)
	}
	return nil
}
