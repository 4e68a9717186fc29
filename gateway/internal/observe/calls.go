package observe

import (
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
)

// Outcomes of a plugin call, as svc_plugin_call_duration_seconds labels
// them: the plugin answered, the plugin refused (an error in its answer),
// or the hop failed (the plugin was not serving, crashed or timed out).
const (
	CallOK      = "ok"
	CallRefused = "refused"
	CallFailed  = "failed"
)

// Calls times the gateway's calls of plugins: the hop there and back and
// the plugin's handler, by plugin, procedure and outcome. Procedures are
// those of the loaded manifests, so the label set stays bounded.
type Calls struct {
	duration *prometheus.HistogramVec
}

// NewCalls registers the plugin call histogram on m.
func NewCalls(m *Metrics) *Calls {
	c := &Calls{duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "svc_plugin_call_duration_seconds",
		Help:    "Time from the gateway's call of a plugin procedure to its answer (the hop and the plugin's handler), by plugin, procedure and outcome (ok, refused, failed).",
		Buckets: []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, 1, 5},
	}, []string{"plugin", "procedure", "outcome"})}
	m.registry.MustRegister(c.duration)
	return c
}

// Observe records one call that started at start.
func (c *Calls) Observe(plugin, procedure, outcome string, start time.Time) {
	if c == nil {
		return
	}
	c.duration.WithLabelValues(plugin, procedure, outcome).Observe(time.Since(start).Seconds())
}

// poolCollector reads a connection pool's statistics at each scrape.
type poolCollector struct {
	name string
	pool *pgxpool.Pool
}

var (
	poolConnsDesc = prometheus.NewDesc("svc_db_pool_connections",
		"Connections of a gateway PostgreSQL pool, by state (acquired, idle, constructing).", []string{"pool", "state"}, nil)
	poolMaxDesc = prometheus.NewDesc("svc_db_pool_max_connections",
		"The most connections a gateway PostgreSQL pool may open.", []string{"pool"}, nil)
	poolAcquiresDesc = prometheus.NewDesc("svc_db_pool_acquires_total",
		"Connections acquired from a gateway PostgreSQL pool.", []string{"pool"}, nil)
	poolWaitsDesc = prometheus.NewDesc("svc_db_pool_acquire_waits_total",
		"Acquires that had to wait for a connection (the pool was exhausted).", []string{"pool"}, nil)
	poolWaitDesc = prometheus.NewDesc("svc_db_pool_acquire_wait_seconds_total",
		"Time spent waiting for a connection of a gateway PostgreSQL pool.", []string{"pool"}, nil)
)

// PoolCollector exports pool's statistics under the label pool=name.
func PoolCollector(name string, pool *pgxpool.Pool) prometheus.Collector {
	return poolCollector{name: name, pool: pool}
}

func (c poolCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{poolConnsDesc, poolMaxDesc, poolAcquiresDesc, poolWaitsDesc, poolWaitDesc} {
		ch <- d
	}
}

func (c poolCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.pool.Stat()
	ch <- prometheus.MustNewConstMetric(poolConnsDesc, prometheus.GaugeValue, float64(s.AcquiredConns()), c.name, "acquired")
	ch <- prometheus.MustNewConstMetric(poolConnsDesc, prometheus.GaugeValue, float64(s.IdleConns()), c.name, "idle")
	ch <- prometheus.MustNewConstMetric(poolConnsDesc, prometheus.GaugeValue, float64(s.ConstructingConns()), c.name, "constructing")
	ch <- prometheus.MustNewConstMetric(poolMaxDesc, prometheus.GaugeValue, float64(s.MaxConns()), c.name)
	ch <- prometheus.MustNewConstMetric(poolAcquiresDesc, prometheus.CounterValue, float64(s.AcquireCount()), c.name)
	ch <- prometheus.MustNewConstMetric(poolWaitsDesc, prometheus.CounterValue, float64(s.EmptyAcquireCount()), c.name)
	ch <- prometheus.MustNewConstMetric(poolWaitDesc, prometheus.CounterValue, s.AcquireDuration().Seconds(), c.name)
}
