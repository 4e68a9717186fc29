package openai

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"google.golang.org/protobuf/proto"

	"github.com/svcplatform/svc/gateway/internal/auth"
	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
	"github.com/svcplatform/svc/internal/plugin/manifestcheck"
)

// Metrics is the call path as the metrics gatherer uses it: the methods
// of the route table in use that hand a plugin's metrics to the gateway
// (svc.plugin.v1.metrics), and unary calls.
type Metrics interface {
	// Declaring lists the methods of the route table in use whose edge
	// options f accepts, by procedure.
	Declaring(f func(*manifestcheck.Edge) bool) []*manifestcheck.Method
	Call(ctx context.Context, procedure string, req proto.Message) ([]byte, error)
}

// Gatherer fetches, at each scrape, the metrics of every plugin that
// declares a metrics method, so that its counters appear on the gateway's
// /metrics. A plugin that is not serving contributes nothing rather than
// failing the scrape.
func Gatherer(d Metrics) prometheus.Gatherer {
	return prometheus.GathererFunc(func() ([]*dto.MetricFamily, error) {
		var families []*dto.MetricFamily
		for _, m := range d.Declaring(func(e *manifestcheck.Edge) bool { return e.Metrics }) {
			more, err := gather(d, m.Procedure)
			if err != nil {
				return nil, err
			}
			families = append(families, more...)
		}
		return families, nil
	})
}

// gather fetches one plugin's metrics.
func gather(d Metrics, procedure string) ([]*dto.MetricFamily, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	// The gateway itself asks, with the operator's standing.
	ctx = auth.WithPrincipal(ctx, &auth.Principal{Kind: pluginv1.TokenKind_TOKEN_KIND_ADMIN})
	out, err := d.Call(ctx, procedure, &pluginv1.MetricsRequest{})
	if err != nil {
		return nil, nil
	}
	var res pluginv1.MetricsResponse
	if err := proto.Unmarshal(out, &res); err != nil {
		return nil, err
	}
	families := make([]*dto.MetricFamily, 0, len(res.GetFamilies()))
	for _, b := range res.GetFamilies() {
		f := &dto.MetricFamily{}
		if err := proto.Unmarshal(b, f); err != nil {
			return nil, err
		}
		families = append(families, f)
	}
	return families, nil
}
