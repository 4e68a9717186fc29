package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/svcplatform/svc/internal/gatewaytest"
	"github.com/svcplatform/svc/internal/pgtest"
)

// replicaWorld is a gateway on a primary cluster with a streaming standby
// (pg_basebackup -R) as its read replica, both on this machine's private
// sockets, and two callers: the Page's owner, who writes, and another user,
// who only reads.
type replicaWorld struct {
	*graphWorld
	db *pgtest.Replicated
}

// replicaMaxLagBytes is the gateway's lag bound in the test: small, so that
// the test can push the replica past it with a little WAL.
const replicaMaxLagBytes = 1 << 20

func newReplicaWorld(t *testing.T) *replicaWorld {
	t.Helper()
	db := pgtest.NewReplicated(t, "svc")
	g := gatewaytest.Start(t, gatewaytest.Options{
		DatabaseURL: db.Primary.URL("svc"),
		Env:         []string{"SVC_DATABASE_REPLICA_URL=" + db.Standby.URL("svc")},
		// The time bound is out of the way (a busy test machine must not
		// decide the outcome); the byte bound is the one the test crosses.
		Args: []string{"--replica-max-lag", "10m", "--replica-max-lag-bytes", fmt.Sprint(replicaMaxLagBytes)},
	})
	w := &replicaWorld{
		graphWorld: &graphWorld{g: g, c: g.Credentials(t),
			owner:    g.UserToken(t, "owner", "public_profile", "pages:read", "pages:manage"),
			stranger: g.UserToken(t, "consumer", "pages:read"),
		},
		db: db,
	}
	eventually(t, "the replica serves reads", func() bool { return metric(t, g, "svc_database_replica_serving") == 1 })
	// "Serving" allows a lag under the byte bound, which the plugins'
	// migrations and the seed fit in: a test that pauses replay at once
	// would read from a standby without the tables (42P01) on a slow run.
	db.WaitReplayed(t)
	return w
}

// sees reports whether token's read of the Page's newest posts holds a post
// with content.
func (w *replicaWorld) sees(t *testing.T, token, content string) bool {
	t.Helper()
	res, body := w.get(t, token, url.Values{"node": {"page/" + w.c.Page.ID + "/posts"}, "limit": {"100"}})
	if res.StatusCode != 200 {
		t.Fatalf("read posts: %d %s", res.StatusCode, body)
	}
	for _, p := range decode[postList](t, body).Data {
		if p.Content == content {
			return true
		}
	}
	return false
}

func TestReadsAreServedByAStreamingReplicaWithReadYourWrites(t *testing.T) {
	t.Parallel()
	w := newReplicaWorld(t)
	replicaReads := func() float64 {
		return metric(t, w.g, `svc_database_replica_reads_total{decision="replica"}`)
	}

	t.Run("another caller's read is served by the replica, which lacks a write it has not replayed", func(t *testing.T) {
		w.db.PauseReplay(t)
		w.publish(t, "written while replay is paused")
		if !w.sees(t, w.owner, "written while replay is paused") {
			t.Fatal("the writer does not read its own write")
		}
		before := replicaReads()
		if w.sees(t, w.stranger, "written while replay is paused") {
			t.Fatal("another caller's read saw the write: it was not served by the paused replica")
		}
		if replicaReads() <= before {
			t.Fatalf("the replica read was not counted: %v then %v", before, replicaReads())
		}
		eventually(t, "the lag is a metric", func() bool { return metric(t, w.g, "svc_database_replica_lag_bytes") > 0 })
		w.db.ResumeReplay(t)
		eventually(t, "the other caller sees the write once it is replayed", func() bool {
			return w.sees(t, w.stranger, "written while replay is paused")
		})
		eventually(t, "the lag is back to 0", func() bool { return metric(t, w.g, "svc_database_replica_lag_bytes") == 0 })
	})

	t.Run("a caller reads its own write at once, every time", func(t *testing.T) {
		ownBefore := metric(t, w.g, `svc_database_replica_reads_total{decision="primary_own_write"}`)
		for i := range 40 {
			content := fmt.Sprintf("read your writes %d", i)
			w.publish(t, content)
			if !w.sees(t, w.owner, content) {
				t.Fatalf("write %d was not seen by its writer's next read", i)
			}
		}
		if got := metric(t, w.g, `svc_database_replica_reads_total{decision="primary_own_write"}`); got < ownBefore+40 {
			t.Fatalf("the writer's reads were not sent to the primary: %v → %v", ownBefore, got)
		}
		before := replicaReads()
		eventually(t, "the writer's reads go back to the replica once it has replayed", func() bool {
			w.sees(t, w.owner, "read your writes 39")
			return replicaReads() > before
		})
	})

	t.Run("a replica lagging past the bound is skipped", func(t *testing.T) {
		w.db.PauseReplay(t)
		// WAL of anything counts: a table of a few MiB in another database.
		w.db.ExecPrimary(t, "postgres", `CREATE TABLE IF NOT EXISTS ballast AS SELECT g, repeat('x', 100) AS pad FROM generate_series(1, 40000) g`)
		eventually(t, "the replica is skipped", func() bool { return metric(t, w.g, "svc_database_replica_serving") == 0 })
		if lag := metric(t, w.g, "svc_database_replica_lag_bytes"); lag <= replicaMaxLagBytes {
			t.Fatalf("lag %v is within the bound, yet the replica is skipped", lag)
		}
		w.publish(t, "written while the replica lags")
		if !w.sees(t, w.stranger, "written while the replica lags") {
			t.Fatal("another caller's read went to the lagging replica")
		}
		w.db.ResumeReplay(t)
		eventually(t, "the replica serves again", func() bool { return metric(t, w.g, "svc_database_replica_serving") == 1 })
	})

	t.Run("reads keep being served when the replica stops mid-load", func(t *testing.T) {
		// Four readers read without pause; after their first reads the
		// replica is stopped (a fast shutdown, as an operator's or a
		// crash's), and each goes on for 60 reads after it has stopped.
		const readers, before, after = 4, 30, 60
		var (
			wg       sync.WaitGroup
			mu       sync.Mutex
			failures []string
			reads    int
			stopped  atomic.Bool
		)
		warm := make(chan struct{}, readers)
		client := &http.Client{Timeout: time.Minute}
		for range readers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				left := after
				for i := 0; left > 0; i++ {
					if i == before {
						warm <- struct{}{}
					}
					if stopped.Load() {
						left--
					}
					req, _ := http.NewRequest("GET", w.g.URL+"/api/v1/graph?node=page/"+w.c.Page.ID+"/posts&limit=5", nil)
					req.Header.Set("Authorization", "Bearer "+w.stranger)
					res, err := client.Do(req)
					mu.Lock()
					reads++
					if err != nil {
						failures = append(failures, err.Error())
					} else {
						body, _ := io.ReadAll(res.Body)
						res.Body.Close()
						if res.StatusCode != 200 || !strings.Contains(string(body), `"data"`) {
							failures = append(failures, fmt.Sprintf("%d %s", res.StatusCode, body))
						}
					}
					mu.Unlock()
				}
			}()
		}
		for range readers {
			<-warm
		}
		servedBefore := replicaReads()
		if err := w.db.Standby.Stop(context.Background()); err != nil {
			t.Fatal(err)
		}
		stopped.Store(true)
		wg.Wait()
		if len(failures) > 0 {
			t.Fatalf("%d of %d reads failed while the replica stopped, e.g. %s", len(failures), reads, failures[0])
		}
		if servedBefore == 0 {
			t.Fatal("no read was sent to the replica before it stopped")
		}
		t.Logf("%d reads, none failed; the plugins retried %d on the primary after the replica failed them",
			reads, strings.Count(w.g.Logs(), "the read replica failed a read"))
		eventually(t, "the replica is reported down", func() bool { return metric(t, w.g, "svc_database_replica_up") == 0 })
		w.publish(t, "written after the replica stopped")
		if !w.sees(t, w.stranger, "written after the replica stopped") {
			t.Fatal("a read after the replica stopped missed a write")
		}
	})
}
