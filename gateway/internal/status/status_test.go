package status

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/svcplatform/svc/gateway/internal/apierr"
	"github.com/svcplatform/svc/gateway/internal/host"
	"github.com/svcplatform/svc/gateway/internal/sla"
	"github.com/svcplatform/svc/internal/pgtest"
	"github.com/svcplatform/svc/sdk/migrate"
	coresql "github.com/svcplatform/svc/sql/core"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func pool(t *testing.T) *pgxpool.Pool {
	t.Helper()
	p := pgtest.Pool(t, pgtest.NewDatabase(t))
	if _, err := migrate.Apply(context.Background(), p, "core", coresql.Migrations()); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestTheProbeRulesGiveEachComponentsLevel(t *testing.T) {
	t.Parallel()
	down := errors.New("down")
	for _, c := range []struct {
		name string
		got  Level
		want Level
	}{
		{"database answering quickly", DatabaseLevel(nil, 5*time.Millisecond), Operational},
		{"database answering in over a second", DatabaseLevel(nil, 2*time.Second), Degraded},
		{"database not answering", DatabaseLevel(down, 0), MajorOutage},
		{"plugin healthy", PluginLevel(nil), Operational},
		{"plugin answering it is unhealthy", PluginLevel(fmt.Errorf("x: %w", host.ErrUnhealthy)), PartialOutage},
		{"plugin without a process", PluginLevel(down), MajorOutage},
		{"no webhook backlog", WebhookLevel(nil, 0, 0), Operational},
		{"webhooks due for 30 s", WebhookLevel(nil, 5, 30*time.Second), Operational},
		{"webhooks due for 2 min", WebhookLevel(nil, 5, 2*time.Minute), Degraded},
		{"webhooks due for 10 min", WebhookLevel(nil, 5, 10*time.Minute), PartialOutage},
		{"webhook backlog unreadable", WebhookLevel(down, 0, 0), MajorOutage},
		{"few requests, all failed", RecentLevel(sla.Window{Requests: 19, Availability: 0}), Operational},
		{"4 % failed", RecentLevel(sla.Window{Requests: 100, Availability: 0.96}), Operational},
		{"5 % failed", RecentLevel(sla.Window{Requests: 100, Availability: 0.95}), Degraded},
		{"25 % failed", RecentLevel(sla.Window{Requests: 100, Availability: 0.75}), PartialOutage},
	} {
		if c.got != c.want {
			t.Errorf("%s: %s, want %s", c.name, c.got, c.want)
		}
	}
}

func TestThePlatformsStatusIsItsWorstComponentsButOneOutIsPartial(t *testing.T) {
	t.Parallel()
	cs := func(ls ...Level) []Component {
		out := make([]Component, len(ls))
		for i, l := range ls {
			out[i] = Component{Name: fmt.Sprint(i), Status: l}
		}
		return out
	}
	for _, c := range []struct {
		in   []Component
		want Level
	}{
		{cs(Operational, Operational), Operational},
		{cs(Operational, Degraded), Degraded},
		{cs(Operational, PartialOutage, Degraded), PartialOutage},
		{cs(Operational, MajorOutage), PartialOutage},
		{cs(MajorOutage, MajorOutage), MajorOutage},
	} {
		if got := Overall(c.in); got != c.want {
			t.Errorf("%v: %s, want %s", c.in, got, c.want)
		}
	}
}

// The incident state machine, row by row: open statuses move freely; a
// resolved incident is closed.
func TestIncidentTransitionsFollowTheTable(t *testing.T) {
	t.Parallel()
	all := []string{Investigating, Identified, Monitoring, Resolved}
	for _, from := range all {
		for _, to := range all {
			want := from != Resolved
			if got := CanMove(from, to); got != want {
				t.Errorf("%s → %s: %v, want %v", from, to, got, want)
			}
		}
	}
	if CanMove(Investigating, "fixed") {
		t.Error("an unknown status is accepted")
	}
}

func TestIncidentsAreWrittenUpdatedAndClosedOnceResolved(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := NewIncidents(pool(t), func(context.Context) []string { return []string{"graph", "book"} })
	if _, err := s.Create(ctx, NewIncident{Title: "x", Components: []string{"nope"}}); !isInvalid(err, "components") {
		t.Fatalf("an unknown component: %v", err)
	}
	if _, err := s.Create(ctx, NewIncident{Title: ""}); !isInvalid(err, "title") {
		t.Fatalf("no title: %v", err)
	}
	id, err := s.Create(ctx, NewIncident{Title: "Posts fail", Components: []string{"book"}, Body: "Looking."})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.AddUpdate(ctx, id, NewUpdate{Status: Identified, Body: "A bad deploy."}); err != nil {
		t.Fatal(err)
	}
	if err := s.AddUpdate(ctx, id, NewUpdate{Status: Resolved, Body: "Rolled back."}); err != nil {
		t.Fatal(err)
	}
	if err := s.AddUpdate(ctx, id, NewUpdate{Status: Monitoring, Body: "again"}); !isInvalid(err, "status") {
		t.Fatalf("an update of a resolved incident: %v", err)
	}
	if err := s.AddUpdate(ctx, "999999", NewUpdate{Status: Monitoring, Body: "x"}); err == nil || apierr.From(err).HTTPStatus != 404 {
		t.Fatalf("an unknown incident: %v", err)
	}
	got, err := s.Recent(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Status != Resolved || got[0].Resolved == nil || len(got[0].Updates) != 3 ||
		got[0].Updates[0].Body != "Rolled back." || got[0].Updates[2].Status != Investigating {
		t.Fatalf("incidents %+v", got)
	}
}

func isInvalid(err error, field string) bool {
	e, ok := apierr.As(err)
	return ok && e.HTTPStatus == 400 && e.Field == field
}

// A round probes every plugin, keeps the result fresh and notes each
// component's worst level of the day once it rises.
func TestARoundProbesEveryPluginAndNotesTheDaysWorst(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	p := pool(t)
	bookDown := true
	pr := New(Options{Pool: p, Log: slog.New(slog.DiscardHandler), Interval: time.Hour,
		Plugins: func() []string { return []string{"book", "chat"} },
		Probe: func(_ context.Context, name string) error {
			if name == "book" && bookDown {
				return errors.New("plugin book is restarting")
			}
			return nil
		}})
	levels := func(cs []Component) map[string]Level {
		m := map[string]Level{}
		for _, c := range cs {
			m[c.Name] = c.Status
		}
		return m
	}
	got := levels(pr.Round(ctx))
	if got["book"] != MajorOutage || got["chat"] != Operational || got["database"] != Operational || got["graph"] != Operational || len(got) != 6 {
		t.Fatalf("first round %v", got)
	}
	bookDown = false
	if got := levels(pr.Round(ctx)); got["book"] != Operational {
		t.Fatalf("second round %v", got)
	}
	// Current reuses a fresh round.
	if c := pr.Current(ctx); time.Since(c[0].Checked) > time.Minute {
		t.Fatalf("stale %v", c)
	}
	var worst int
	if err := p.QueryRow(ctx, `SELECT worst FROM core.status_days WHERE component = 'book' AND day = (now() AT TIME ZONE 'UTC')::date`).Scan(&worst); err != nil || worst != int(MajorOutage) {
		t.Fatalf("book's day %d (%v), want the major outage", worst, err)
	}
}
