package observe

import (
	"testing"
	"time"
)

func TestEachKindAndStatusIsCountedInItsOwnSeries(t *testing.T) {
	m := NewMetrics()
	for _, o := range []struct {
		kind   string
		status int
	}{{"rest", 200}, {"rest", 200}, {"rest", 404}, {"rpc", 200}, {"rest", 200}} {
		m.Observe(o.kind, o.status, time.Millisecond)
	}
	families, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	counts, observed := map[string]float64{}, map[string]uint64{}
	for _, f := range families {
		for _, s := range f.GetMetric() {
			labels := ""
			for _, l := range s.GetLabel() {
				labels += l.GetName() + "=" + l.GetValue() + " "
			}
			switch f.GetName() {
			case "svc_http_requests_total":
				counts[labels] = s.GetCounter().GetValue()
			case "svc_http_request_duration_seconds":
				observed[labels] = s.GetHistogram().GetSampleCount()
			}
		}
	}
	wantCounts := map[string]float64{"kind=rest status=200 ": 3, "kind=rest status=404 ": 1, "kind=rpc status=200 ": 1}
	wantObserved := map[string]uint64{"kind=rest ": 4, "kind=rpc ": 1}
	if len(counts) != len(wantCounts) || len(observed) != len(wantObserved) {
		t.Fatalf("series %v and %v, want %v and %v", counts, observed, wantCounts, wantObserved)
	}
	for k, v := range wantCounts {
		if counts[k] != v {
			t.Errorf("requests{%s} = %v, want %v", k, counts[k], v)
		}
	}
	for k, v := range wantObserved {
		if observed[k] != v {
			t.Errorf("duration{%s} has %d samples, want %d", k, observed[k], v)
		}
	}
}

// BenchmarkObserve is the metrics' share of every request.
func BenchmarkObserve(b *testing.B) {
	m := NewMetrics()
	b.ReportAllocs()
	for b.Loop() {
		m.Observe("rest", 200, time.Millisecond)
	}
}
