package webhook

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

var (
	lagPendingDesc = prometheus.NewDesc("svc_webhook_pending_deliveries",
		"Webhook deliveries not yet done: due, being attempted or waiting for a retry.", nil, nil)
	lagUndispatchedDesc = prometheus.NewDesc("svc_webhook_undispatched_events",
		"Outbox events not yet fanned out into deliveries.", nil, nil)
	lagDueDesc = prometheus.NewDesc("svc_webhook_due_wait_seconds",
		"How long the oldest due delivery that no gateway holds has waited (0 when none): the lag of retries and ordered deliveries.", nil, nil)
	lagDispatchDesc = prometheus.NewDesc("svc_webhook_dispatch_wait_seconds",
		"How long the oldest undispatched outbox event has waited (0 when none): the delivery lag; a backlog waits in the outbox, each gateway dispatching what its workers can take.", nil, nil)
)

// Collectors are the delivery lag gauges, read from the database at each
// scrape, so every gateway reports the same shared queue, and this
// gateway's count of delivery attempts by outcome.
func (s *Service) Collectors() []prometheus.Collector {
	return []prometheus.Collector{lagCollector{s}, s.outcomes}
}

// Outcomes of an attempt, as svc_webhook_attempts_total labels them.
const (
	outcomeDelivered = "delivered" // the receiver answered 2xx
	outcomeRetrying  = "retrying"  // failed; attempted again on schedule
	outcomeFailed    = "failed"    // failed its last retry: the delivery failed
	outcomeNotSent   = "not_sent"  // no subscription for it any more
	outcomeHeld      = "held"      // the endpoint is disabled: kept until a replay
)

func newOutcomes() *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "svc_webhook_attempts_total",
		Help: "Webhook delivery attempts this gateway recorded, by app, event type and outcome (delivered, retrying, failed, not_sent, held).",
	}, []string{"app_id", "event_type", "outcome"})
}

type lagCollector struct{ s *Service }

func (c lagCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{lagPendingDesc, lagUndispatchedDesc, lagDueDesc, lagDispatchDesc} {
		ch <- d
	}
}

func (c lagCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	row, err := c.s.q.WebhookLag(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(lagPendingDesc, err)
		return
	}
	ch <- prometheus.MustNewConstMetric(lagPendingDesc, prometheus.GaugeValue, float64(row.Pending))
	ch <- prometheus.MustNewConstMetric(lagUndispatchedDesc, prometheus.GaugeValue, float64(row.Undispatched))
	ch <- prometheus.MustNewConstMetric(lagDueDesc, prometheus.GaugeValue, row.DueWait)
	ch <- prometheus.MustNewConstMetric(lagDispatchDesc, prometheus.GaugeValue, row.DispatchWait)
}
