package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
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
	"github.com/svcplatform/svc/internal/pgtest"
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
// Page's posts from writers+readers goroutines until stop is closed; each
// goroutine waits pace between its requests (0: none, as fast as it can).
func graphLoad(w *graphWorld, writers, readers int, pace time.Duration, stop <-chan struct{}) (*loadFigures, *sync.WaitGroup) {
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
				time.Sleep(pace)
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
				time.Sleep(pace)
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
	grantBook(t, w)
	if res, body := w.post(t, w.c.App.APIKey, map[string]any{"node": "app/" + w.c.App.ID + "/subscriptions",
		"callback_url": rcv.srv.URL + "/hook", "verify_token": hookVerifyToken, "events": []string{"book.post.created"}}, nil); res.StatusCode != 200 {
		t.Fatalf("subscribe: %d %s", res.StatusCode, body)
	}

	stop := make(chan struct{})
	figures, wg := graphLoad(w, 4, 4, 0, stop)
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

	nothingLost(t, w, rcv, dbURL, "postgres-kill-restart", figures)
}

// nothingLost checks, after a fault test's load, that the gateway serves
// writes again without having been restarted, that the load saw only 200s
// and transient 503s (and some 503s: the fault did meet the load), and that
// every acknowledged post is stored once with one event, delivered to the
// subscribed app. It logs the figures for the README's reliability table.
func nothingLost(t *testing.T, w *graphWorld, rcv *hookReceiver, dbURL, name string, figures *loadFigures) {
	t.Helper()
	ctx := context.Background()
	// The first write after the recovery may still meet a connection that
	// died with the server: that answer is a transient 503, which a client
	// retries, as this one does for a few seconds.
	for deadline := time.Now().Add(10 * time.Second); ; {
		res, body := w.post(t, w.owner, map[string]any{"node": "page/" + w.c.Page.ID + "/posts", "content": "after the faults"}, nil)
		if res.StatusCode == 200 {
			break
		}
		if res.StatusCode != 503 || time.Now().After(deadline) {
			t.Fatalf("the write after the faults: %d %s", res.StatusCode, body)
		}
		time.Sleep(200 * time.Millisecond)
	}
	figures.mu.Lock()
	acked := append([]string(nil), figures.acked...)
	statuses := fmt.Sprint(figures.statuses)
	odd := figures.odd
	saw503 := figures.statuses[503] > 0
	requests := sum(figures.statuses)
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
	t.Logf("FIGURES %s: requests %d (reads %d), statuses %s, posts acknowledged %d, stored %d, events emitted %d, delivered %d, lost %d, duplicated %d",
		name, requests, figures.reads.Load(), statuses, len(acked), stored, events, delivered, len(acked)-delivered, duplicated)
	if len(odd) > 0 {
		t.Errorf("answers other than 200 and 503 during the faults: %s", strings.Join(odd, "; "))
	}
	if !saw503 {
		t.Errorf("no request met the outage (statuses %s): the faults did not happen under load", statuses)
	}
	if stored != len(acked) || events != len(acked) || delivered != len(acked) {
		t.Errorf("of %d acknowledged posts, %d stored, %d events, %d delivered", len(acked), stored, events, delivered)
	}
}

// The embedded database killed with SIGKILL under load: the gateway
// restarts it (crash recovery), callers meanwhile see transient 503s, and
// nothing acknowledged is lost; the gateway process itself stays up.
func TestTheEmbeddedDatabaseKilledUnderLoadIsRestartedByTheGateway(t *testing.T) {
	t.Parallel()
	dataDir := t.TempDir()
	// The cluster may run as an unprivileged user: let it into the folder.
	for _, dir := range []string{filepath.Dir(dataDir), dataDir} {
		if err := os.Chmod(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	g := gatewaytest.Start(t, gatewaytest.Options{Embedded: true, DataDir: dataDir})
	out, err := exec.Command(filepath.Join(gatewaytest.BinDir(t), "gateway"), "database-url", "--data-dir", dataDir).Output()
	if err != nil {
		t.Fatalf("gateway database-url: %v", err)
	}
	dbURL := strings.TrimSpace(string(out))
	w := &graphWorld{g: g, db: dbURL, c: g.Credentials(t)}
	w.owner = g.UserToken(t, "owner", "pages:read", "pages:manage")
	rcv := newHookReceiver(t, w.c.App.ClientSecret)
	grantBook(t, w)
	if res, body := w.post(t, w.c.App.APIKey, map[string]any{"node": "app/" + w.c.App.ID + "/subscriptions",
		"callback_url": rcv.srv.URL + "/hook", "verify_token": hookVerifyToken, "events": []string{"book.post.created"}}, nil); res.StatusCode != 200 {
		t.Fatalf("subscribe: %d %s", res.StatusCode, body)
	}

	stop := make(chan struct{})
	figures, wg := graphLoad(w, 4, 4, 0, stop)
	time.Sleep(time.Second)
	pid := postmasterPID(t, dataDir)
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// Until the restarted server serves writes again, then a little more.
	deadline := time.Now().Add(60 * time.Second)
	for {
		figures.mu.Lock()
		n := len(figures.acked)
		figures.mu.Unlock()
		time.Sleep(500 * time.Millisecond)
		figures.mu.Lock()
		moved := len(figures.acked) > n
		figures.mu.Unlock()
		if moved && postmasterPID(t, dataDir) != pid || time.Now().After(deadline) {
			break
		}
	}
	time.Sleep(time.Second)
	close(stop)
	wg.Wait()
	select {
	case <-g.Done():
		t.Fatal("the gateway exited when its database was killed")
	default:
	}
	nothingLost(t, w, rcv, dbURL, "embedded-postgres-kill", figures)
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

// Two gateways on one database under write load, one killed with SIGKILL
// half-way: clients move to the other (as a load balancer would, retrying
// with the same Idempotency-Key), which carries on; each key made one post,
// whichever gateway saw it; every acknowledged post's event is delivered at
// least once, the killed gateway's leased deliveries included.
func TestTwoGatewaysOneKilledMidLoadLoseNothingAndKeepIdempotency(t *testing.T) {
	t.Parallel()
	db := pgtest.NewDatabase(t)
	dataDir := t.TempDir() // one installation: one master key
	a := gatewaytest.Start(t, gatewaytest.Options{DatabaseURL: db, DataDir: dataDir})
	b := gatewaytest.Start(t, gatewaytest.AnotherMachine(t, gatewaytest.Options{DatabaseURL: db, DataDir: dataDir}))
	w := &graphWorld{g: a, db: db, c: a.Credentials(t)}
	owner := a.UserToken(t, "owner", "pages:read", "pages:manage")
	rcv := newHookReceiver(t, w.c.App.ClientSecret)
	grantBook(t, w)
	if res, body := w.post(t, w.c.App.APIKey, map[string]any{"node": "app/" + w.c.App.ID + "/subscriptions",
		"callback_url": rcv.srv.URL + "/hook", "verify_token": hookVerifyToken, "events": []string{"book.post.created"}}, nil); res.StatusCode != 200 {
		t.Fatalf("subscribe: %d %s", res.StatusCode, body)
	}

	var mu sync.Mutex
	statuses := map[int]int{}
	var acked, moved []string
	var killed atomic.Bool
	client := &http.Client{Timeout: 10 * time.Second}
	write := func(base, key string) (int, string) {
		body := fmt.Sprintf(`{"node":"page/%s/posts","content":"two gateways %s"}`, w.c.Page.ID, key)
		req, _ := http.NewRequest("POST", base+"/api/v1/graph", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+owner)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Idempotency-Key", key)
		res, err := client.Do(req)
		if err != nil {
			return 0, ""
		}
		defer res.Body.Close()
		var out struct{ ID string }
		_ = json.NewDecoder(res.Body).Decode(&out)
		return res.StatusCode, out.ID
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for i := range 6 {
		wg.Go(func() {
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				key := fmt.Sprintf("two-%d-%d", i, n)
				first, second := a.URL, b.URL
				if n%2 == 1 || killed.Load() {
					first, second = b.URL, a.URL
				}
				status, id := write(first, key)
				if status == 0 || status == 503 { // the gateway is gone: the same request, to the other
					mu.Lock()
					moved = append(moved, key)
					mu.Unlock()
					status, id = write(second, key)
				}
				mu.Lock()
				statuses[status]++
				if status == 200 {
					acked = append(acked, id)
				}
				mu.Unlock()
			}
		})
	}
	time.Sleep(1500 * time.Millisecond)
	if err := a.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-a.Done()
	killed.Store(true)
	time.Sleep(1500 * time.Millisecond)
	close(stop)
	wg.Wait()

	mu.Lock()
	defer mu.Unlock()
	// Every key made at most one post, though some were sent to both gateways.
	doubled := dbCount(t, db, `SELECT count(*) FROM (SELECT content FROM book.posts WHERE content LIKE 'two gateways %' GROUP BY content HAVING count(*) > 1) d`)
	stored := dbCount(t, db, `SELECT count(*) FROM book.posts WHERE id::text = ANY($1)`, acked)
	// The killed gateway's leases end within the lease time; give it that.
	delivered, duplicated := waitDelivered(rcv, "book.post.created", "postId", acked, 90*time.Second)
	t.Logf("FIGURES two-gateways-one-killed: writes %d, statuses %v, retried on the other gateway %d, posts acknowledged %d, stored %d, keys with two posts %d, delivered %d, lost %d, duplicated %d",
		sum(statuses), statuses, len(moved), len(acked), stored, doubled, delivered, len(acked)-delivered, duplicated)
	if len(moved) == 0 {
		t.Error("no write met the killed gateway: the fault did not happen under load")
	}
	for status := range statuses {
		// 409: the killed gateway had claimed the key and was running the
		// write; its claim holds until its lease ends (a transient answer).
		if status != 200 && status != 409 {
			t.Errorf("%d writes answered %d after moving to the live gateway", statuses[status], status)
		}
	}
	if doubled != 0 || stored != len(acked) || delivered != len(acked) {
		t.Errorf("of %d acknowledged posts: %d stored, %d keys made two posts, %d delivered", len(acked), stored, doubled, delivered)
	}
	res, body := do(t, "GET", b.URL+"/readyz", nil, nil)
	if res.StatusCode != 200 {
		t.Errorf("the surviving gateway is not ready: %d %s", res.StatusCode, body)
	}
}

// SIGTERM while deliveries are in flight to a slow receiver: the stopping
// gateway finishes or hands back what it holds, and the other gateway
// delivers the rest; every event arrives.
func TestSIGTERMDuringWebhookDeliveryHandsTheRestToTheOtherGateway(t *testing.T) {
	t.Parallel()
	db := pgtest.NewDatabase(t)
	dataDir := t.TempDir()
	a := gatewaytest.Start(t, gatewaytest.Options{DatabaseURL: db, DataDir: dataDir})
	w := &graphWorld{g: a, db: db, c: a.Credentials(t)}
	w.owner = a.UserToken(t, "owner", "pages:read", "pages:manage")
	rcv := newHookReceiver(t, w.c.App.ClientSecret)
	// A slow receiver, so that deliveries are in flight when SIGTERM comes
	// (set before the first request reaches the server).
	inner := rcv.srv.Config.Handler
	rcv.srv.Config.Handler = http.HandlerFunc(func(rw http.ResponseWriter, req *http.Request) {
		if req.Method == http.MethodPost {
			time.Sleep(2 * time.Second)
		}
		inner.ServeHTTP(rw, req)
	})
	grantBook(t, w)
	if res, body := w.post(t, w.c.App.APIKey, map[string]any{"node": "app/" + w.c.App.ID + "/subscriptions",
		"callback_url": rcv.srv.URL + "/hook", "verify_token": hookVerifyToken, "events": []string{"book.post.created"}}, nil); res.StatusCode != 200 {
		t.Fatalf("subscribe: %d %s", res.StatusCode, body)
	}
	// More events than one gateway's workers hold at once (2 x 32).
	ids := make([]string, 300)
	var publishers sync.WaitGroup
	for i := range ids {
		publishers.Go(func() {
			body := fmt.Sprintf(`{"node":"page/%s/posts","content":"sigterm %d"}`, w.c.Page.ID, i)
			req, _ := http.NewRequest("POST", a.URL+"/api/v1/graph", strings.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+w.owner)
			req.Header.Set("Content-Type", "application/json")
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Errorf("publish: %v", err)
				return
			}
			defer res.Body.Close()
			var out struct{ ID string }
			if err := json.NewDecoder(res.Body).Decode(&out); err != nil || res.StatusCode != 200 {
				t.Errorf("publish: %d %v", res.StatusCode, err)
			}
			ids[i] = out.ID
		})
	}
	publishers.Wait()
	// Some deliveries are in flight on a (the only gateway so far).
	deadline := time.Now().Add(30 * time.Second)
	for len(rcv.all("book.post.created")) < 3 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	b := gatewaytest.Start(t, gatewaytest.AnotherMachine(t, gatewaytest.Options{DatabaseURL: db, DataDir: dataDir}))
	before := len(rcv.all("book.post.created"))
	if err := a.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	<-a.Done()
	atStop := len(rcv.all("book.post.created"))
	delivered, duplicated := waitDelivered(rcv, "book.post.created", "postId", ids, 90*time.Second)
	t.Logf("FIGURES sigterm-during-delivery: events %d, delivered before SIGTERM %d, by the time the gateway stopped %d, in all %d (so by the other gateway %d), lost %d, duplicated %d",
		len(ids), before, atStop, delivered, delivered+duplicated-atStop, len(ids)-delivered, duplicated)
	if before >= len(ids) || atStop >= len(ids) {
		t.Error("every event was delivered before the gateway stopped: nothing was handed over")
	}
	if delivered != len(ids) {
		t.Errorf("%d of %d events delivered after the SIGTERM:\n%s", delivered, len(ids), b.Logs())
	}
}
