package e2e

import (
	"bufio"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/svcplatform/svc/internal/gatewaytest"
)

// soakDuration is how long TestASteadyLoadKeepsMemoryGoroutinesAndFilesFlat
// runs: SVC_SOAK (a Go duration; `make soak` sets ten minutes), else 40 s
// within `make test`.
func soakDuration(t *testing.T) time.Duration {
	if v := os.Getenv("SVC_SOAK"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("SVC_SOAK=%q: %v", v, err)
		}
		return d
	}
	return 40 * time.Second
}

// soakSample is one look at the gateway process.
type soakSample struct {
	rssKB, goroutines, files int
}

func sampleGateway(t *testing.T, g *gatewaytest.Gateway) soakSample {
	t.Helper()
	var s soakSample
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", g.PID()))
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			s.rssKB, _ = strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
		}
	}
	f.Close()
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", g.PID()))
	if err != nil {
		t.Fatal(err)
	}
	s.files = len(fds)
	_, body := scrape(t, g)
	for line := range strings.SplitSeq(string(body), "\n") {
		if v, ok := strings.CutPrefix(line, "go_goroutines "); ok {
			s.goroutines, _ = strconv.Atoi(strings.TrimSpace(v))
		}
	}
	return s
}

// A steady load of Graph reads and writes with webhook deliveries, for
// SVC_SOAK: the gateway's memory, goroutines and open files stay flat. Pools
// (database connections, keep-alive connections to the receiver) fill during
// the first third; the last third must be no higher than the middle one,
// with room for the garbage collector's rhythm. A leak grows with time and
// fails that; a pool plateaus.
func TestASteadyLoadKeepsMemoryGoroutinesAndFilesFlat(t *testing.T) {
	t.Parallel()
	duration := soakDuration(t)
	w := newGraphWorld(t)
	rcv := newHookReceiver(t, w.c.App.ClientSecret)
	grantBook(t, w)
	if res, body := w.post(t, w.c.App.APIKey, map[string]any{"node": "app/" + w.c.App.ID + "/subscriptions",
		"callback_url": rcv.srv.URL + "/hook", "verify_token": hookVerifyToken, "events": []string{"book.post.created"}}, nil); res.StatusCode != 200 {
		t.Fatalf("subscribe: %d %s", res.StatusCode, body)
	}
	stop := make(chan struct{})
	figures, wg := graphLoad(w, 2, 2, 0, stop)
	var samples []soakSample
	var mu sync.Mutex
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(duration / 20)
		defer tick.Stop()
		end := time.After(duration)
		for {
			select {
			case <-tick.C:
				s := sampleGateway(t, w.g)
				mu.Lock()
				samples = append(samples, s)
				mu.Unlock()
			case <-end:
				return
			}
		}
	}()
	<-done
	close(stop)
	wg.Wait()

	third := len(samples) / 3
	avg := func(part []soakSample) (s soakSample) {
		for _, x := range part {
			s.rssKB += x.rssKB / len(part)
			s.goroutines += x.goroutines / len(part)
			s.files += x.files / len(part)
		}
		return s
	}
	first, middle, last := avg(samples[:third]), avg(samples[third:2*third]), avg(samples[len(samples)-third:])
	figures.mu.Lock()
	statuses := fmt.Sprint(figures.statuses)
	acked := len(figures.acked)
	figures.mu.Unlock()
	t.Logf("FIGURES soak %s: requests %s, posts %d, deliveries %d; RSS %d → %d → %d KiB, goroutines %d → %d → %d, open files %d → %d → %d (thirds of the run)",
		duration, statuses, acked, len(rcv.all("book.post.created")), first.rssKB, middle.rssKB, last.rssKB,
		first.goroutines, middle.goroutines, last.goroutines, first.files, middle.files, last.files)
	if last.rssKB > middle.rssKB*5/4+8*1024 {
		t.Errorf("RSS grew from %d to %d KiB", middle.rssKB, last.rssKB)
	}
	if last.goroutines > middle.goroutines*11/10+8 {
		t.Errorf("goroutines grew from %d to %d", middle.goroutines, last.goroutines)
	}
	if last.files > middle.files*11/10+4 {
		t.Errorf("open files grew from %d to %d", middle.files, last.files)
	}
	if figures.statuses[http.StatusOK] == 0 {
		t.Error("the load did nothing")
	}
}
