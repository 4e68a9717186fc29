package webhook_test

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/svcplatform/svc/gateway/internal/webhook"
)

// /metrics counts delivery attempts by app, event type and outcome, so an
// operator sees which app's endpoint fails on which events (issue 28).
func TestDeliveryOutcomesAreCountedPerAppAndEventType(t *testing.T) {
	t.Parallel()
	b := setup(t)
	rcv := newReceiver(t, b.App.ClientSecret)
	b.subscribe(t, rcv.URL(), webhook.EventBookPostCreated)
	reg := prometheus.NewRegistry()
	reg.MustRegister(b.svc.Collectors()...)
	run(t, b.svc)

	rcv.status.Store(500)
	b.emit(t, b.pageEvent(1))
	counted := func(outcome string) float64 {
		families, _ := reg.Gather()
		for _, f := range families {
			if f.GetName() != "svc_webhook_attempts_total" {
				continue
			}
			for _, m := range f.GetMetric() {
				labels := map[string]string{}
				for _, l := range m.GetLabel() {
					labels[l.GetName()] = l.GetValue()
				}
				if labels["app_id"] == b.App.ID && labels["event_type"] == webhook.EventBookPostCreated && labels["outcome"] == outcome {
					return m.GetCounter().GetValue()
				}
			}
		}
		return 0
	}
	eventually(t, 30*time.Second, "a failed attempt counted", func() bool { return counted("retrying") >= 1 })
	rcv.status.Store(0)
	eventually(t, 30*time.Second, "the delivery counted", func() bool { return counted("delivered") == 1 })
}
