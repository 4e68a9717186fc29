// Package status serves the platform's status (CONTRACT §18): components
// whose status comes from real probes this gateway runs every few seconds
// (the database, each product plugin's health call, the webhook backlog,
// and the Graph's and OAuth's recent failures as package sla recorded
// them), the operator's incidents, the worst status of each component per
// day for the last 90 days (as Atlassian Statuspage shows them), and the
// SLA's windows; as JSON (GET /api/v1/platform/status, /api/v1/platform/sla)
// and as the /status page.
package status

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/svcplatform/svc/gateway/internal/coredb"
	"github.com/svcplatform/svc/gateway/internal/host"
	"github.com/svcplatform/svc/gateway/internal/sla"
)

// Level is a component's status, worst last.
type Level int

// The levels, as Statuspage names them.
const (
	Operational Level = iota
	Degraded
	PartialOutage
	MajorOutage
)

var levelNames = []string{"operational", "degraded", "partial_outage", "major_outage"}

func (l Level) String() string { return levelNames[l] }

// MarshalText writes the level's name.
func (l Level) MarshalText() ([]byte, error) { return []byte(l.String()), nil }

// The platform's own components; each product plugin is one more, by its
// name.
const (
	ComponentGraph    = "graph"
	ComponentOAuth    = "oauth"
	ComponentWebhooks = "webhooks"
	ComponentDatabase = "database"
)

// Component is one component's last probe.
type Component struct {
	Name    string    `json:"name"`
	Status  Level     `json:"status"`
	Checked time.Time `json:"checked_time"`
	// Reason says why it is not operational (the page shows it; the JSON
	// does not, as it may name internals).
	Reason string `json:"-"`
}

// Options configure a Prober.
type Options struct {
	Pool *pgxpool.Pool
	Log  *slog.Logger
	// Plugins lists the product plugins by name; Probe asks one whether
	// it is healthy (host.Host.Probe).
	Plugins func() []string
	Probe   func(ctx context.Context, name string) error
	// Interval between probe rounds; default 5 s, so that a status is at
	// most Interval + Timeout old (CONTRACT §18: 15 s).
	Interval time.Duration
	// Timeout bounds each probe; default 3 s.
	Timeout time.Duration
}

// Prober probes the components and keeps the last round.
type Prober struct {
	opts Options
	last atomic.Pointer[[]Component]
	// noted is the worst level written to core.status_days per component
	// for the day it names, so that a round writes only what rose.
	mu    sync.Mutex
	noted map[string]notedDay
	// round makes concurrent callers of Current share one round.
	round sync.Mutex
}

type notedDay struct {
	day   string
	worst Level
}

// New returns a Prober; Run probes in the background.
func New(opts Options) *Prober {
	if opts.Interval <= 0 {
		opts.Interval = 5 * time.Second
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 3 * time.Second
	}
	if opts.Log == nil {
		opts.Log = slog.Default()
	}
	return &Prober{opts: opts, noted: map[string]notedDay{}}
}

// Run probes every Interval until ctx ends.
func (p *Prober) Run(ctx context.Context) {
	t := time.NewTicker(p.opts.Interval)
	defer t.Stop()
	for {
		p.Round(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Current is the last round, probed now when it is older than the
// freshness bound (the background rounds stalled, or never ran).
func (p *Prober) Current(ctx context.Context) []Component {
	if c := p.last.Load(); c != nil && len(*c) > 0 && time.Since((*c)[0].Checked) < 2*p.opts.Interval {
		return *c
	}
	return p.Round(ctx)
}

// Round probes every component once, keeps the result and notes each
// component's level in its day's history.
func (p *Prober) Round(ctx context.Context) []Component {
	p.round.Lock()
	defer p.round.Unlock()
	o := p.opts
	var plugins []string
	if o.Plugins != nil {
		plugins = o.Plugins()
	}
	pluginLevels := make([]Level, len(plugins))
	pluginReasons := make([]string, len(plugins))
	var wg sync.WaitGroup
	for i, name := range plugins {
		wg.Go(func() {
			pctx, cancel := context.WithTimeout(ctx, o.Timeout)
			defer cancel()
			err := o.Probe(pctx, name)
			pluginLevels[i] = PluginLevel(err)
			if err != nil {
				pluginReasons[i] = err.Error()
			}
		})
	}
	pctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	q := coredb.New(o.Pool)
	start := time.Now()
	pingErr := o.Pool.Ping(pctx)
	db := DatabaseLevel(pingErr, time.Since(start))
	var hooks Level
	var recent map[sla.Surface]sla.Window
	if pingErr == nil {
		b, err := q.WebhookBacklog(pctx)
		hooks = WebhookLevel(err, b.Due, time.Duration(b.OldestSeconds*float64(time.Second)))
		recent, _ = sla.Since(pctx, o.Pool, time.Now().Add(-recentWindow))
	} else {
		hooks = MajorOutage
	}
	wg.Wait()
	now := time.Now().UTC()
	out := []Component{
		{Name: ComponentGraph, Status: worst(db, RecentLevel(recent[sla.Graph]))},
		{Name: ComponentOAuth, Status: worst(db, RecentLevel(recent[sla.OAuth]))},
		{Name: ComponentWebhooks, Status: worst(hooks, RecentLevel(recent[sla.Webhooks]))},
		{Name: ComponentDatabase, Status: db},
	}
	if pingErr != nil {
		out[3].Reason = pingErr.Error()
	}
	for i, name := range plugins {
		out = append(out, Component{Name: name, Status: pluginLevels[i], Reason: pluginReasons[i]})
	}
	for i := range out {
		out[i].Checked = now
	}
	p.last.Store(&out)
	if pingErr == nil {
		p.note(ctx, out, now)
	}
	return out
}

// note raises each component's worst level of the day where it rose.
func (p *Prober) note(ctx context.Context, cs []Component, now time.Time) {
	day := now.Format(time.DateOnly)
	q := coredb.New(p.opts.Pool)
	for _, c := range cs {
		p.mu.Lock()
		n, seen := p.noted[c.Name]
		p.mu.Unlock()
		if seen && n.day == day && n.worst >= c.Status {
			continue
		}
		err := q.NoteStatusDay(ctx, coredb.NoteStatusDayParams{Component: c.Name,
			Day: pgtype.Date{Time: now.Truncate(24 * time.Hour), Valid: true}, Worst: int16(c.Status)})
		if err != nil {
			p.opts.Log.Warn("status: cannot note a component's day", "component", c.Name, "error", err)
			return
		}
		p.mu.Lock()
		p.noted[c.Name] = notedDay{day: day, worst: c.Status}
		p.mu.Unlock()
	}
}

// recentWindow is how far back RecentLevel looks: the SLA minutes flushed
// lately.
const recentWindow = 5 * time.Minute

// The rules, one function per kind of probe (tested row by row).

// DatabaseLevel: a failed ping is a major outage; a ping slower than a
// second is degraded.
func DatabaseLevel(err error, took time.Duration) Level {
	switch {
	case err != nil:
		return MajorOutage
	case took > time.Second:
		return Degraded
	}
	return Operational
}

// PluginLevel: a plugin that answers its health call serving is
// operational; one that answers it is not serving is a partial outage (it
// runs, a dependency of its is missing); one without a process taking
// calls, or not answering, is a major outage.
func PluginLevel(err error) Level {
	switch {
	case err == nil:
		return Operational
	case errors.Is(err, host.ErrUnhealthy):
		return PartialOutage
	}
	return MajorOutage
}

// WebhookLevel: deliveries due and waiting for a worker more than a minute
// is degraded, more than five a partial outage; the backlog unreadable, a
// major outage.
func WebhookLevel(err error, due int64, oldest time.Duration) Level {
	switch {
	case err != nil:
		return MajorOutage
	case due > 0 && oldest > 5*time.Minute:
		return PartialOutage
	case due > 0 && oldest > time.Minute:
		return Degraded
	}
	return Operational
}

// RecentLevel: of at least 20 requests in the last minutes, 5 % failed by
// the platform's fault is degraded, 25 % a partial outage.
func RecentLevel(w sla.Window) Level {
	if w.Requests < 20 {
		return Operational
	}
	switch failed := 1 - w.Availability; {
	case failed >= 0.25:
		return PartialOutage
	case failed >= 0.05:
		return Degraded
	}
	return Operational
}

// Overall is the platform's status from its components': the worst of
// them, except that some (not all) components out is a partial outage of
// the platform.
func Overall(cs []Component) Level {
	l, out := Operational, 0
	for _, c := range cs {
		l = worst(l, c.Status)
		if c.Status == MajorOutage {
			out++
		}
	}
	if l == MajorOutage && out < len(cs) {
		return PartialOutage
	}
	return l
}

func worst(a, b Level) Level { return max(a, b) }
