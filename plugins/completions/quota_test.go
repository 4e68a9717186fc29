package main

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/svcplatform/svc/internal/pgtest"
	"github.com/svcplatform/svc/plugins/completions/internal/completionsdb"
	completionssql "github.com/svcplatform/svc/plugins/completions/sql"
	"github.com/svcplatform/svc/sdk/migrate"
)

// setupDB is a fresh database with the completions schema.
func setupDB(t *testing.T) *pgxpool.Pool {
	t.Helper()
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, pgtest.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	if _, err := migrate.Apply(ctx, pool, "completions", completionssql.Migrations()); err != nil {
		t.Fatal(err)
	}
	return pool
}

var quietLog = slog.New(slog.NewTextHandler(io.Discard, nil))

func TestTwoProcessesLeasingOneRequestsPerMinuteLimitNeverPassIt(t *testing.T) {
	t.Parallel()
	db := setupDB(t)
	now := time.Date(2026, 11, 23, 10, 0, 30, 0, time.UTC)
	a, b := newQuota(db, quietLog, limits{requestsPerMinute: 40}), newQuota(db, quietLog, limits{requestsPerMinute: 40})
	a.now, b.now = func() time.Time { return now }, func() time.Time { return now }
	admitted := 0
	for i := range 100 {
		q := a
		if i%3 == 0 {
			q = b
		}
		if q.admit(context.Background(), "app1") == nil {
			admitted++
		}
	}
	// 40 at most; under it by at most what the other process holds (a
	// slice of 2 and the half slice that triggers its background refill).
	if admitted > 40 || admitted < 37 {
		t.Fatalf("%d requests admitted against a limit of 40 per minute", admitted)
	}
	e := a.admit(context.Background(), "app1")
	if e == nil || e.Status != 429 || *e.Code != "rate_limited" || e.RetryAfter != 30 {
		t.Fatalf("refusal %+v", e)
	}
	// The next minute is a new window.
	now = now.Add(time.Minute)
	if e := b.admit(context.Background(), "app1"); e != nil {
		t.Fatalf("a new minute refused: %v", e)
	}
}

func TestATokenBudgetIsChargedAfterTheRequestAndOvershootsByLessThanOneRequestPerProcess(t *testing.T) {
	t.Parallel()
	db := setupDB(t)
	a, b := newQuota(db, quietLog, limits{monthlyTokens: 1000}), newQuota(db, quietLog, limits{monthlyTokens: 1000})
	used := 0
	for i := range 200 {
		q := a
		if i%2 == 1 {
			q = b
		}
		if q.admit(context.Background(), "app1") != nil {
			continue
		}
		q.charge("app1", 37)
		used += 37
	}
	if used < 1000-2*75 || used > 1000+2*37 {
		t.Fatalf("%d tokens used against a budget of 1000", used)
	}
	e := b.admit(context.Background(), "app1")
	if e == nil || *e.Code != "budget_exceeded" {
		t.Fatalf("refusal %+v", e)
	}
	// The operator's budget is a ceiling: 0 from the app (its value) does
	// not lift it.
	if err := completionsdb.New(db).SetBudget(context.Background(), completionsdb.SetBudgetParams{AppID: "app1", MonthlyTokens: ptr(int64(0))}); err != nil {
		t.Fatal(err)
	}
	a.forget("app1")
	if e := a.admit(context.Background(), "app1"); e == nil || *e.Code != "budget_exceeded" {
		t.Fatalf("the app's 0 lifted the operator's budget: %+v", e)
	}
}

func TestABudgetSetMidMonthCountsTheTokensUsedBeforeIt(t *testing.T) {
	t.Parallel()
	db := setupDB(t)
	r := newRecorder(db, quietLog, newMetrics())
	r.record("app1", "m", "up", usage{PromptTokens: 300, CompletionTokens: 200})
	if err := r.flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	q := newQuota(db, quietLog, limits{monthlyTokens: 400})
	e := q.admit(context.Background(), "app1")
	if e == nil || *e.Code != "budget_exceeded" {
		t.Fatalf("500 tokens used, a budget of 400, and %+v", e)
	}
}

func TestAUsageBatchRetriedAfterItsCommitAddsNothingTwice(t *testing.T) {
	t.Parallel()
	db := setupDB(t)
	r := newRecorder(db, quietLog, newMetrics())
	r.record("app1", "m", "up", usage{PromptTokens: 10, CompletionTokens: 5})
	if err := r.flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	// The same batch written again, as after a commit whose answer was lost.
	b := usageBatch{id: "batch-1", counts: map[usageKey]*usageCounts{
		{app: "app1", model: "m", upstream: "up", day: time.Now().UTC().Truncate(24 * time.Hour)}: {requests: 1, prompt: 3, completion: 4}}}
	q := completionsdb.New(db)
	for range 2 {
		if _, err := q.AddUsage(context.Background(), b.params()); err != nil {
			t.Fatal(err)
		}
	}
	used, err := q.UsedTokens(context.Background(), completionsdb.UsedTokensParams{AppID: "app1", Since: pgtype.Date{Time: time.Now().UTC().AddDate(0, 0, -1), Valid: true}})
	if err != nil || used != 10+5+3+4 {
		t.Fatalf("used %d (%v), want 22", used, err)
	}
}

func ptr[T any](v T) *T { return &v }

func TestMain(m *testing.M) { pgtest.Main(m) }

func TestAnAppsOwnLimitsNeverLiftTheOperators(t *testing.T) {
	t.Parallel()
	db := setupDB(t)
	ctx := context.Background()
	q := newQuota(db, quietLog, limits{monthlyTokens: 1000, requestsPerMinute: 60})
	set := func(tokens, rpm int64) {
		t.Helper()
		if err := completionsdb.New(db).SetBudget(ctx, completionsdb.SetBudgetParams{AppID: "app1",
			MonthlyTokens: &tokens, RequestsPerMinute: &rpm}); err != nil {
			t.Fatal(err)
		}
		q.forget("app1")
	}
	for _, tc := range []struct {
		name        string
		tokens, rpm int64
		want        limits
	}{
		{"0 is the operator's value", 0, 0, limits{monthlyTokens: 1000, requestsPerMinute: 60, source: "config"}},
		{"above the operator's (stored earlier) is capped", 5000, 600, limits{monthlyTokens: 1000, requestsPerMinute: 60, source: "config"}},
		{"lower is the app's own", 500, 6, limits{monthlyTokens: 500, requestsPerMinute: 6, source: "app"}},
		{"one lower, one 0", 500, 0, limits{monthlyTokens: 500, requestsPerMinute: 60, source: "app"}},
	} {
		set(tc.tokens, tc.rpm)
		if got, err := q.limitsOf(ctx, "app1", true); err != nil || got != tc.want {
			t.Errorf("%s: %+v (%v), want %+v", tc.name, got, err, tc.want)
		}
	}

	// With no operator's value, an app's own is its limit and 0 is none.
	free := newQuota(db, quietLog, limits{})
	set(0, 7)
	if got, _ := free.limitsOf(ctx, "app1", true); got != (limits{requestsPerMinute: 7, source: "app"}) {
		t.Errorf("no operator's limits: %+v", got)
	}
}
