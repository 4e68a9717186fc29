package observe

import (
	"net/http"
	"strconv"
	"sync"
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
	m.requests.WithLabelValues(kind, strconv.Itoa(status)).Inc()
	m.duration.WithLabelValues(kind).Observe(d.Seconds())
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
