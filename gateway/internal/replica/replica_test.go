package replica

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/svcplatform/svc/gateway/internal/auth"
	"github.com/svcplatform/svc/internal/pgtest"
)

func TestDecideSendsAReadToTheReplicaOnlyWhenItIsUpWithinBoundsAndHoldsTheCallersWrite(t *testing.T) {
	t.Parallel()
	serving := Health{Up: true, Within: true}
	rows := []struct {
		rule    string
		h       Health
		pending bool
		want    Decision
	}{
		{"a replica that is up, within bounds, for a caller with no pending write serves", serving, false, ReplicaServes},
		{"a caller whose write the replica may lack reads the primary", serving, true, PrimaryOwnWrite},
		{"a replica past a lag bound is skipped", Health{Up: true}, false, PrimaryReplicaLags},
		{"a replica past a lag bound is skipped whatever the caller wrote", Health{Up: true}, true, PrimaryReplicaLags},
		{"a replica that is down is skipped", Health{}, false, PrimaryReplicaDown},
		{"a replica that is down is skipped whatever the caller wrote", Health{}, true, PrimaryReplicaDown},
	}
	for _, r := range rows {
		if got := decide(r.h, r.pending); got != r.want {
			t.Errorf("%s: decide = %s, want %s", r.rule, got, r.want)
		}
	}
}

func TestLagIsTheAgeOfTheFirstPrimaryPositionTheReplicaHasNotReplayed(t *testing.T) {
	t.Parallel()
	now := time.Unix(1000, 0)
	samples := []sample{{now.Add(-3 * time.Second), 100}, {now.Add(-2 * time.Second), 200}, {now.Add(-time.Second), 300}}
	rows := []struct {
		rule     string
		replayed int64
		want     time.Duration
	}{
		{"a replica that replayed every position seen has no lag", 300, 0},
		{"a replica past the newest position has no lag", 400, 0},
		{"a replica between two positions lags since the first it lacks", 250, time.Second},
		{"a replica exactly at a position lags since the next", 100, 2 * time.Second},
		{"a replica behind every position lags at least since the oldest", 50, 3 * time.Second},
	}
	for _, r := range rows {
		if got := lagOf(samples, r.replayed, now); got != r.want {
			t.Errorf("%s: lag = %s, want %s", r.rule, got, r.want)
		}
	}
	if got := lagOf(nil, 0, now); got != 0 {
		t.Errorf("no samples: lag = %s", got)
	}
}

func TestOldSamplesAreDroppedButTheNewestIsKept(t *testing.T) {
	t.Parallel()
	now := time.Unix(1000, 0)
	s := []sample{{now.Add(-time.Minute), 1}, {now.Add(-20 * time.Second), 2}, {now.Add(-time.Second), 3}}
	if got := trimSamples(s, now, 10*time.Second); len(got) != 1 || got[0].lsn != 3 {
		t.Fatalf("trimmed to %v", got)
	}
	old := []sample{{now.Add(-time.Hour), 7}}
	if got := trimSamples(old, now, time.Second); len(got) != 1 {
		t.Fatalf("the only sample was dropped: %v", got)
	}
}

func TestTheCallerIsTheUserElseTheAppElseThePlugin(t *testing.T) {
	t.Parallel()
	rows := []struct {
		p    *auth.Principal
		want string
	}{
		{&auth.Principal{UserID: "7", AppID: "9"}, "u:7"},
		{&auth.Principal{AppID: "9"}, "a:9"},
		{&auth.Principal{Plugin: "book"}, "p:book"},
	}
	for _, r := range rows {
		if got := Caller(r.p); got != r.want {
			t.Errorf("Caller(%v) = %q, want %q", r.p, got, r.want)
		}
	}
}

func TestANilRouterSendsEveryReadToThePrimary(t *testing.T) {
	t.Parallel()
	var r *Router
	r.Wrote(&auth.Principal{UserID: "1"})
	if r.MayRead(&auth.Principal{UserID: "1"}) {
		t.Fatal("a nil router allowed the replica")
	}
	r.Close()
}

// TestTheProbeFollowsARealStandby drives the probe by hand against a real
// streaming standby, so each step is one probe.
func TestTheProbeFollowsARealStandby(t *testing.T) {
	t.Parallel()
	pair := pgtest.NewReplicated(t, "svc")
	ctx := context.Background()
	primary, err := pgxpool.New(ctx, pair.Primary.URL("svc"))
	if err != nil {
		t.Fatal(err)
	}
	defer primary.Close()
	r, err := New(Options{Primary: primary, URL: pair.Standby.URL("svc"), MaxLag: time.Hour, MaxLagBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	writer, other := &auth.Principal{UserID: "1"}, &auth.Principal{UserID: "2"}

	t.Run("before its first probe the replica serves nothing", func(t *testing.T) {
		if r.MayRead(other) {
			t.Fatal("allowed before any probe")
		}
	})
	t.Run("a replica that has caught up serves reads", func(t *testing.T) {
		pair.WaitReplayed(t)
		if h := r.probe(ctx); !h.Up || !h.Within || !r.MayRead(other) {
			t.Fatalf("health %+v", h)
		}
	})
	t.Run("a writer reads the primary until the replica has replayed its write, others read the replica", func(t *testing.T) {
		pair.PauseReplay(t)
		pair.ExecPrimary(t, "svc", `CREATE TABLE written (id int)`)
		r.Wrote(writer)
		r.probe(ctx)
		r.probe(ctx)
		if r.MayRead(writer) {
			t.Fatal("the writer was sent to a replica that has not replayed its write")
		}
		if !r.MayRead(other) {
			t.Fatal("another caller was kept from a replica within bounds")
		}
		pair.ResumeReplay(t)
		pair.WaitReplayed(t)
		r.probe(ctx)
		if !r.MayRead(writer) {
			t.Fatal("the writer stays on the primary after the replica replayed its write")
		}
	})
	t.Run("a write that ends while a probe runs waits for the next probe's position", func(t *testing.T) {
		r.mu.Lock()
		r.seq++ // as a probe does when it begins
		r.mu.Unlock()
		r.Wrote(writer)
		r.mu.Lock()
		r.seq-- // the probe below plays the one that was running
		r.mu.Unlock()
		r.probe(ctx)
		r.mu.Lock()
		m := r.pending[Caller(writer)]
		r.mu.Unlock()
		if m == nil || m.lsn != 0 {
			t.Fatalf("a write that ended during a probe got that probe's position: %+v", m)
		}
		pair.WaitReplayed(t)
		r.probe(ctx)
		pair.WaitReplayed(t)
		r.probe(ctx)
		if !r.MayRead(writer) {
			t.Fatal("the write is never resolved")
		}
	})
	t.Run("a replica past the byte bound is skipped, and serves again once caught up", func(t *testing.T) {
		pair.PauseReplay(t)
		pair.ExecPrimary(t, "postgres", `CREATE TABLE ballast AS SELECT g, repeat('x', 100) AS pad FROM generate_series(1, 40000) g`)
		if h := r.probe(ctx); !h.Up || h.Within || h.LagBytes <= 1<<20 || r.MayRead(other) {
			t.Fatalf("health %+v", h)
		}
		pair.ResumeReplay(t)
		pair.WaitReplayed(t)
		if h := r.probe(ctx); !h.Within || h.Lag != 0 {
			t.Fatalf("health %+v", h)
		}
	})
	t.Run("a stopped replica is down", func(t *testing.T) {
		if err := pair.Standby.Stop(ctx); err != nil {
			t.Fatal(err)
		}
		r.probe(ctx) // may still find the terminated connection
		if h := r.probe(ctx); h.Up || r.MayRead(other) {
			t.Fatalf("health %+v", h)
		}
	})
}

func TestManyWritersAreMergedIntoOnePositionEveryoneWaitsFor(t *testing.T) {
	t.Parallel()
	r := &Router{pending: map[string]*marker{}, health: Health{Up: true, Within: true}}
	r.reads = newReadsCounter()
	for i := range maxPending + 1 {
		r.Wrote(&auth.Principal{UserID: string(rune('a'+i%26)) + time.Duration(i).String()})
	}
	if len(r.pending) > 1 || r.all == nil {
		t.Fatalf("pending %d, all %v", len(r.pending), r.all)
	}
	if r.MayRead(&auth.Principal{UserID: "never wrote"}) {
		t.Fatal("a caller was sent to the replica while an overflowed write is unresolved")
	}
}
