package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/svcplatform/svc/internal/gatewaytest"
	"github.com/svcplatform/svc/internal/pgtest"
)

// Under a steady write load with deliveries, the pruned tables (outbox,
// delivery log, idempotency keys) stop growing once their retention is
// reached: the last third of the run holds no more rows than the middle
// third. Retention and interval are shortened to seconds for the test.
func TestPrunedTablesStayFlatUnderASteadyLoad(t *testing.T) {
	t.Parallel()
	db := pgtest.NewDatabase(t)
	g := gatewaytest.Start(t, gatewaytest.Options{DatabaseURL: db, Args: []string{
		"--retain-events", "2s", "--retain-deliveries", "2s", "--retain-idempotency-keys", "2s", "--prune-interval", "500ms"}})
	w := &graphWorld{g: g, db: db, c: g.Credentials(t)}
	w.owner = g.UserToken(t, "owner", "pages:read", "pages:manage")
	rcv := newHookReceiver(t, w.c.App.ClientSecret)
	grantBook(t, w)
	if res, body := w.post(t, w.c.App.APIKey, map[string]any{"node": "app/" + w.c.App.ID + "/subscriptions",
		"callback_url": rcv.srv.URL + "/hook", "verify_token": hookVerifyToken, "events": []string{"book.post.created"}}, nil); res.StatusCode != 200 {
		t.Fatalf("subscribe: %d %s", res.StatusCode, body)
	}
	tables := []string{"core.outbox", "core.webhook_deliveries", "core.idempotency_keys"}
	stop := make(chan struct{})
	// A steady 50 writes a second, well within what the machine delivers, so
	// that no backlog of pending deliveries (never pruned) builds up.
	figures, wg := graphLoad(w, 2, 0, 40*time.Millisecond, stop)
	var samples []map[string]int
	for range 15 {
		time.Sleep(time.Second)
		s := map[string]int{}
		for _, table := range tables {
			s[table] = dbCount(t, db, "SELECT count(*) FROM "+table)
		}
		samples = append(samples, s)
	}
	close(stop)
	wg.Wait()

	third := len(samples) / 3
	peak := func(part []map[string]int, table string) (m int) {
		for _, s := range part {
			m = max(m, s[table])
		}
		return m
	}
	figures.mu.Lock()
	written := len(figures.acked)
	figures.mu.Unlock()
	var report []string
	for _, table := range tables {
		middle, last := peak(samples[third:2*third], table), peak(samples[2*third:], table)
		report = append(report, fmt.Sprintf("%s peak %d → %d", table, middle, last))
		if last > middle*3/2+50 {
			t.Errorf("%s grew: peak %d rows in the middle third, %d in the last", table, middle, last)
		}
	}
	t.Logf("FIGURES pruning: %d posts written in %ds with 2 s retention; %s (middle → last third)", written, len(samples), strings.Join(report, ", "))
	if written < 3*third {
		t.Fatalf("only %d posts were written: the load did not run", written)
	}
	_, body := scrape(t, g)
	for _, want := range []string{`svc_pruned_rows_total{table="core.outbox"}`, `svc_table_live_rows{schema="core",table="outbox"}`, `svc_prune_rounds_total{outcome="done"}`} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}
