package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/svcplatform/svc/internal/gatewaytest"
	"github.com/svcplatform/svc/internal/pgembed"
)

// loadFigures counts what a fault test's load saw.
type loadFigures struct {
	mu       sync.Mutex
	statuses map[int]int
	odd      []string // answers other than 200 and 503, for the report
	acked    []string // ids of posts whose write answered 200
	reads    atomic.Int64
}

func (f *loadFigures) record(status int, body []byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.statuses[status]++
	if status != 200 && status != 503 && len(f.odd) < 5 {
		f.odd = append(f.odd, fmt.Sprintf("%d %s", status, body))
	}
}

// graphLoad writes posts (each with its own Idempotency-Key) and reads the
// Page's posts from writers+readers goroutines until stop is closed.
func graphLoad(w *graphWorld, writers, readers int, stop <-chan struct{}) (*loadFigures, *sync.WaitGroup) {
	f := &loadFigures{statuses: map[int]int{}}
	client := &http.Client{Timeout: 10 * time.Second}
	send := func(req *http.Request) (int, []byte) {
		res, err := client.Do(req)
		if err != nil {
			return 0, []byte(err.Error())
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, b
	}
	var wg sync.WaitGroup
	for i := range writers {
		wg.Go(func() {
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				body := fmt.Sprintf(`{"node":"page/%s/posts","content":"fault load %d-%d"}`, w.c.Page.ID, i, n)
				req, _ := http.NewRequest("POST", w.g.URL+"/api/v1/graph", strings.NewReader(body))
				req.Header.Set("Authorization", "Bearer "+w.owner)
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Idempotency-Key", fmt.Sprintf("fault-%d-%d", i, n))
				status, b := send(req)
				f.record(status, b)
				if status == 200 {
					var out struct{ ID string }
					_ = json.Unmarshal(b, &out)
					f.mu.Lock()
					f.acked = append(f.acked, out.ID)
					f.mu.Unlock()
				} else {
					time.Sleep(20 * time.Millisecond) // a client backs off a little on errors
				}
			}
		})
	}
	for range readers {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				req, _ := http.NewRequest("GET", w.g.URL+"/api/v1/graph?node=page/"+w.c.Page.ID+"/posts&limit=5", nil)
				req.Header.Set("Authorization", "Bearer "+w.owner)
				status, b := send(req)
				f.record(status, b)
				f.reads.Add(1)
				if status != 200 {
					time.Sleep(20 * time.Millisecond)
				}
			}
		})
	}
	return f, &wg
}

// PostgreSQL killed with SIGKILL, then restarted cleanly, while the Graph
// is read and written: callers see only 200 or a transient 503, the gateway
// recovers without a restart, every acknowledged post is in the database
// with exactly one event, and every such event reaches the subscribed app.
func TestPostgreSQLKilledAndRestartedUnderLoadLosesNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	// A cluster of this test's own (durable settings: a kill must not lose
	// what was acknowledged), as an operator's external database.
	pgDir := filepath.Join(t.TempDir(), "pg")
	log := slog.New(slog.DiscardHandler)
	cluster, err := pgembed.Start(ctx, pgembed.Options{Dir: pgDir, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cluster.Stop(context.Background()) })
	admin, err := pgx.Connect(ctx, cluster.URL("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Exec(ctx, "CREATE DATABASE svc"); err != nil {
		t.Fatal(err)
	}
	_ = admin.Close(ctx)
	dbURL := cluster.URL("svc")

	g := gatewaytest.Start(t, gatewaytest.Options{DatabaseURL: dbURL})
	w := &graphWorld{g: g, db: dbURL, c: g.Credentials(t)}
	w.owner = g.UserToken(t, "owner", "pages:read", "pages:manage")
	rcv := newHookReceiver(t, w.c.App.ClientSecret)
	if res, body := w.post(t, w.c.App.APIKey, map[string]any{"node": "app/" + w.c.App.ID + "/subscriptions",
		"callback_url": rcv.srv.URL + "/hook", "verify_token": hookVerifyToken, "events": []string{"book.post.created"}}, nil); res.StatusCode != 200 {
		t.Fatalf("subscribe: %d %s", res.StatusCode, body)
	}

	stop := make(chan struct{})
	figures, wg := graphLoad(w, 4, 4, stop)
	time.Sleep(time.Second)
	// SIGKILL: no shutdown at all; the next start runs crash recovery.
	if err := syscall.Kill(cluster.PID(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-cluster.Wait()
	time.Sleep(500 * time.Millisecond)
	if cluster, err = pgembed.Start(ctx, pgembed.Options{Dir: pgDir, Logger: log}); err != nil {
		t.Fatalf("restart after SIGKILL: %v", err)
	}
	time.Sleep(1500 * time.Millisecond)
	// A clean restart, as an operator's maintenance would do.
	if err := cluster.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if cluster, err = pgembed.Start(ctx, pgembed.Options{Dir: pgDir, Logger: log}); err != nil {
		t.Fatalf("restart: %v", err)
	}
	time.Sleep(1500 * time.Millisecond)
	close(stop)
	wg.Wait()

	// Recovered without a restart of the gateway: a write goes through.
	w.publish(t, "after the faults")
	figures.mu.Lock()
	acked := append([]string(nil), figures.acked...)
	statuses := fmt.Sprint(figures.statuses)
	odd := figures.odd
	figures.mu.Unlock()

	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var stored, events int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM book.posts WHERE id::text = ANY($1)`, acked).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM core.outbox WHERE type = 'book.post.created' AND data->>'postId' = ANY($1)`, acked).Scan(&events); err != nil {
		t.Fatal(err)
	}
	delivered, duplicated := waitDelivered(rcv, "book.post.created", "postId", acked, 60*time.Second)
	t.Logf("FIGURES postgres-kill-restart: requests %d (reads %d), statuses %s, posts acknowledged %d, stored %d, events emitted %d, delivered %d, lost %d, duplicated %d",
		sum(figures.statuses), figures.reads.Load(), statuses, len(acked), stored, events, delivered, len(acked)-delivered, duplicated)
	if len(odd) > 0 {
		t.Errorf("answers other than 200 and 503 during the faults: %s", strings.Join(odd, "; "))
	}
	if figures.statuses[503] == 0 {
		t.Errorf("no request met the outage (statuses %s): the faults did not happen under load", statuses)
	}
	if stored != len(acked) || events != len(acked) || delivered != len(acked) {
		t.Errorf("of %d acknowledged posts, %d stored, %d events, %d delivered", len(acked), stored, events, delivered)
	}
}

// waitDelivered waits until every id has been delivered (by data[key]) or
// the time is up, and answers how many were and how many deliveries were
// repeats.
func waitDelivered(r *hookReceiver, eventType, key string, ids []string, within time.Duration) (delivered, duplicated int) {
	want := make(map[string]bool, len(ids))
	for _, id := range ids {
		want[id] = true
	}
	deadline := time.Now().Add(within)
	for {
		seen := map[string]int{}
		for _, d := range r.all(eventType) {
			if id, _ := d.body.Data[key].(string); want[id] {
				seen[id]++
			}
		}
		delivered, duplicated = len(seen), 0
		for _, n := range seen {
			duplicated += n - 1
		}
		if delivered == len(ids) || time.Now().After(deadline) {
			return delivered, duplicated
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func sum(m map[int]int) (n int) {
	for _, v := range m {
		n += v
	}
	return n
}
