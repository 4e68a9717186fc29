package observe

import (
	"maps"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
)

// Metrics holds the gateway's Prometheus collectors in a registry of its
// own, so tests can run several gateways in one process.
type Metrics struct {
	registry *prometheus.Registry
	// more are gatherers of metrics kept elsewhere (plugin processes),
	// served beside the registry's.
	mu       sync.Mutex
	more     []prometheus.Gatherer
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
	// series are the children of requests and duration met so far, by
	// kind and status: looked up in the vectors, a request's status was
	// formatted (an allocation) and both label sets hashed under a lock.
	// The map is replaced, never changed; seriesMu orders the additions.
	series   atomic.Pointer[map[seriesKey]requestSeries]
	seriesMu sync.Mutex
}

type seriesKey struct {
	kind   string
	status int
}

type requestSeries struct {
	count    prometheus.Counter
	duration prometheus.Observer
}

// NewMetrics registers the HTTP collectors and the Go runtime's.
func NewMetrics() *Metrics {
	m := &Metrics{
		registry: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "svc_http_requests_total",
			Help: "HTTP requests served, by kind (rest, rpc, page, ops) and status.",
		}, []string{"kind", "status"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "svc_http_request_duration_seconds",
			Help:    "Time to serve an HTTP request, by kind.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 10},
		}, []string{"kind"}),
	}
	m.registry.MustRegister(m.requests, m.duration,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Registry lets other packages add their own collectors.
func (m *Metrics) Registry() *prometheus.Registry { return m.registry }

// AddGatherer serves g's metrics on /metrics too, e.g. a plugin's, fetched
// from its process at each scrape. It must be called before serving.
func (m *Metrics) AddGatherer(g prometheus.Gatherer) { m.more = append(m.more, g) }

// Observe records one served request.
func (m *Metrics) Observe(kind string, status int, d time.Duration) {
	s, ok := requestSeries{}, false
	if series := m.series.Load(); series != nil {
		s, ok = (*series)[seriesKey{kind, status}]
	}
	if !ok {
		s = m.addSeries(kind, status)
	}
	s.count.Inc()
	s.duration.Observe(d.Seconds())
}

// addSeries looks up the children of kind and status in the vectors and
// adds them to m.series. The kinds are few and net/http's statuses
// three-digit, so the map stays small.
func (m *Metrics) addSeries(kind string, status int) requestSeries {
	m.seriesMu.Lock()
	defer m.seriesMu.Unlock()
	key := seriesKey{kind, status}
	old := m.series.Load()
	if old != nil {
		if s, ok := (*old)[key]; ok {
			return s
		}
	}
	s := requestSeries{count: m.requests.WithLabelValues(kind, strconv.Itoa(status)),
		duration: m.duration.WithLabelValues(kind)}
	series := make(map[seriesKey]requestSeries, 1)
	if old != nil {
		series = maps.Clone(*old)
	}
	series[key] = s
	m.series.Store(&series)
	return s
}

// Handler serves /metrics in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	all := prometheus.GathererFunc(func() ([]*dto.MetricFamily, error) {
		m.mu.Lock()
		gatherers := append(prometheus.Gatherers{m.registry}, m.more...)
		m.mu.Unlock()
		return gatherers.Gather()
	})
	return promhttp.HandlerFor(all, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}
