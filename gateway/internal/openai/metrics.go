package openai

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"google.golang.org/protobuf/proto"

	"github.com/svcplatform/svc/gateway/internal/auth"
	completionsv1 "github.com/svcplatform/svc/gen/svc/completions/v1"
	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
)

// Gatherer fetches the completions plugin's metrics at each scrape, so that
// its counters appear on the gateway's /metrics. A plugin that is not
// serving contributes nothing rather than failing the scrape.
func (e *Edge) Gatherer() prometheus.Gatherer {
	return prometheus.GathererFunc(func() ([]*dto.MetricFamily, error) {
		m, err := e.method(procMetrics)
		if err != nil {
			return nil, nil
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		// The gateway itself asks, with the operator's standing.
		ctx = auth.WithPrincipal(ctx, &auth.Principal{Kind: pluginv1.TokenKind_TOKEN_KIND_ADMIN})
		req := &completionsv1.ExportMetricsRequest{}
		out, err := e.d.Call(ctx, m, req, nil)
		if err != nil {
			return nil, nil
		}
		var res completionsv1.ExportMetricsResponse
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
	})
}
