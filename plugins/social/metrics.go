package main

import (
	"errors"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	socialv1 "github.com/svcplatform/svc/gen/svc/social/v1"
	"github.com/svcplatform/svc/sdk"
)

// Metrics the insights nodes answer, in their default order.
var knownMetrics = []string{"views", "likes", "replies"}

// parseMetrics reads the metric parameter: comma-separated names from
// knownMetrics, blanks around them ignored, repeats dropped, in the order
// given; empty means all of them. An unknown name is refused naming metric.
func parseMetrics(param string) ([]string, error) {
	if strings.TrimSpace(param) == "" {
		return knownMetrics, nil
	}
	var out []string
	for _, m := range strings.Split(param, ",") {
		m = strings.TrimSpace(m)
		if !slices.Contains(knownMetrics, m) {
			return nil, sdk.Invalid("metric", "Invalid parameter: metric %q is not one of %s.", m, strings.Join(knownMetrics, ", "))
		}
		if !slices.Contains(out, m) {
			out = append(out, m)
		}
	}
	return out, nil
}

// counts are an object's lifetime counters.
type counts struct{ Views, Likes, Replies int64 }

// insights renders counts for metrics in Meta's insights shape.
func insights(metrics []string, c counts) *socialv1.InsightsResponse {
	res := &socialv1.InsightsResponse{Data: make([]*socialv1.Insight, len(metrics))}
	for i, m := range metrics {
		var v int64
		switch m {
		case "views":
			v = c.Views
		case "likes":
			v = c.Likes
		case "replies":
			v = c.Replies
		}
		res.Data[i] = &socialv1.Insight{Name: m, Period: "lifetime", Values: []*socialv1.InsightValue{{Value: float64(v)}}}
	}
	return res
}

// isForeignKeyViolation tells whether err is PostgreSQL's 23503: the row
// referred to does not exist.
func isForeignKeyViolation(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "23503"
}
