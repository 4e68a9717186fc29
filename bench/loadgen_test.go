package bench

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestHistogramQuantilesMatchSortedSamples(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var h Histogram
	var samples []time.Duration
	for range 100000 {
		// Log-normal-ish: most around 1 ms, a long tail.
		d := time.Duration(float64(time.Millisecond) * (0.2 + rng.ExpFloat64()*rng.ExpFloat64()))
		h.Record(d)
		samples = append(samples, d)
	}
	slices.Sort(samples)
	for _, q := range []float64{0.5, 0.9, 0.99, 0.999} {
		want := samples[int(q*float64(len(samples)))-1]
		got := h.Quantile(q)
		if rel := float64(got-want) / float64(want); rel > 0.01 || rel < -0.01 {
			t.Errorf("q%.3f: got %v, sorted samples say %v (%.2f%% off)", q, got, want, 100*rel)
		}
	}
	if h.Max() != samples[len(samples)-1] || h.Min() != samples[0] {
		t.Errorf("min/max %v/%v, want %v/%v", h.Min(), h.Max(), samples[0], samples[len(samples)-1])
	}
	if h.Count() != uint64(len(samples)) {
		t.Errorf("count %d", h.Count())
	}
}

func TestHistogramBucketsCoverEveryValue(t *testing.T) {
	for _, v := range []uint64{0, 1, 255, 256, 257, 511, 512, 1000, 1 << 20, 1<<40 + 12345, 1<<63 - 1, 1<<64 - 1} {
		i := bucketOf(v)
		if i < 0 || i >= numBuckets {
			t.Fatalf("value %d: bucket %d out of range", v, i)
		}
		lo, hi := bucketRange(i)
		if v < lo || v > hi {
			t.Errorf("value %d in bucket %d = [%d, %d]", v, i, lo, hi)
		}
		if v >= subCount && float64(hi-lo) > float64(lo)/float64(subHalf) {
			t.Errorf("bucket %d = [%d, %d] wider than 1/%d of its value", i, lo, hi, subHalf)
		}
	}
}

// server answers with each response framing the generator must handle.
func server(t *testing.T) (*httptest.Server, *sync.Map) {
	bodies := &sync.Map{}
	mux := http.NewServeMux()
	mux.HandleFunc("/length", func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if len(b) > 0 {
			if _, dup := bodies.LoadOrStore(string(b), true); dup {
				t.Errorf("body %q sent twice", b)
			}
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(TrivialBody)
	})
	mux.HandleFunc("/chunked", func(w http.ResponseWriter, _ *http.Request) {
		for i := range 3 {
			fmt.Fprintf(w, "chunk %d;", i)
			w.(http.Flusher).Flush()
		}
	})
	mux.HandleFunc("/large", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(strings.Repeat("x", 200<<10))) // > the reader's buffer, chunked
	})
	mux.HandleFunc("/limited", func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, `{"error":{"message":"User request limit reached","code":17}}`, http.StatusTooManyRequests)
	})
	mux.HandleFunc("/close", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Connection", "close")
		_, _ = w.Write([]byte("bye"))
	})
	mux.HandleFunc("/empty", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	return ts, bodies
}

func TestRunCountsEveryResponseFraming(t *testing.T) {
	ts, _ := server(t)
	for _, path := range []string{"/length", "/chunked", "/large", "/close", "/empty", "/limited"} {
		t.Run(path, func(t *testing.T) {
			res, err := Run(context.Background(), Load{URL: ts.URL + path, Connections: 4, Requests: 200, Duration: time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			if res.Requests != 200 || len(res.Errors) != 0 {
				t.Fatalf("got %d requests, errors %v: %s", res.Requests, res.Errors, res)
			}
			var want string
			switch path {
			case "/empty":
				want = "204"
			case "/limited":
				want = "429"
			default:
				want = "200"
			}
			if res.Status[want] != 200 {
				t.Errorf("status %v, want 200×%s", res.Status, want)
			}
			if path == "/limited" {
				if res.ErrorTotal != 200 || !strings.Contains(res.ErrorSamples["429"], "User request limit reached") {
					t.Errorf("error total %d, samples %q", res.ErrorTotal, res.ErrorSamples)
				}
			} else if res.ErrorTotal != 0 {
				t.Errorf("error total %d", res.ErrorTotal)
			}
			if path == "/large" && res.BytesRead < 200*(200<<10) {
				t.Errorf("read %d bytes, want every body", res.BytesRead)
			}
			if res.Latency.P50 <= 0 || res.Latency.Max < res.Latency.P99 || res.Latency.P99 < res.Latency.P50 {
				t.Errorf("latency %+v", res.Latency)
			}
		})
	}
}

func TestRunBodyTemplateMakesEveryWriteUnique(t *testing.T) {
	ts, bodies := server(t)
	res, err := Run(context.Background(), Load{Method: "POST", URL: ts.URL + "/length", Connections: 8, Requests: 500,
		Duration: time.Minute, BodyFunc: Template(`{"content":"post {{counter}} ☕"}`),
		Headers: []Header{{Name: "Content-Type", Value: "application/json"}}})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	bodies.Range(func(k, _ any) bool { n++; return true })
	if res.Status["200"] != 500 || n != 500 {
		t.Fatalf("status %v, %d distinct bodies; want 500", res.Status, n)
	}
	if _, ok := bodies.Load(`{"content":"post 499 ☕"}`); !ok {
		t.Errorf("request numbers do not run from 0 to 499")
	}
}

func TestRunStopsByItself(t *testing.T) {
	ts, _ := server(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := Run(ctx, Load{URL: ts.URL + "/length", Connections: 2, Duration: 300 * time.Millisecond, Warmup: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if ctx.Err() != nil {
		t.Fatal("the run did not end by itself")
	}
	if res.Seconds <= 0 || res.Requests == 0 {
		t.Errorf("%+v", res)
	}
}

func TestRunAtRateNeverSendsAheadOfSchedule(t *testing.T) {
	ts, _ := server(t)
	const rate, conns = 200.0, 4
	d := 500 * time.Millisecond
	res, err := Run(context.Background(), Load{URL: ts.URL + "/length", Connections: conns, Duration: d, Rate: rate})
	if err != nil {
		t.Fatal(err)
	}
	// Requests are due at fixed times, so at most rate × duration (+ one per
	// connection for the boundaries) can be sent, however fast the server.
	if limit := uint64(rate*d.Seconds()) + conns; res.Requests > limit || res.Requests == 0 {
		t.Errorf("%d requests at %v/s over %v; want 1..%d", res.Requests, rate, d, limit)
	}
}

func TestRunRefusesNonLoopbackTargets(t *testing.T) {
	_, err := Run(context.Background(), Load{URL: "http://192.0.2.1/", Duration: time.Second})
	if err == nil || !strings.Contains(err.Error(), "loopback") {
		t.Fatalf("got %v", err)
	}
}

func TestRunNeedsAServer(t *testing.T) {
	ts, _ := server(t)
	url := ts.URL
	res, err := Run(context.Background(), Load{URL: url + "/length", Connections: 1, Requests: 10, Duration: time.Minute})
	if err != nil || res.Requests != 10 {
		t.Fatalf("%v %+v", err, res)
	}
	ts.Close()
	if _, err := Run(context.Background(), Load{URL: url + "/length", Duration: time.Second}); err == nil {
		t.Fatal("a run against a closed port started")
	}
}

func TestReadResponseParsesHeadersCaseInsensitively(t *testing.T) {
	raw := "HTTP/1.1 100 Continue\r\n\r\n" +
		"HTTP/1.1 200 OK\r\ncontent-LENGTH: 5\r\nCONNECTION: Keep-Alive\r\n\r\nhello" +
		"HTTP/1.1 500 Internal Server Error\r\nTransfer-Encoding: chunked\r\n\r\n4;ext=1\r\noops\r\n0\r\nTrailer: x\r\n\r\n" +
		"HTTP/1.0 200 OK\r\n\r\nto the end"
	w := &worker{load: &Load{Method: "GET"}, br: bufio.NewReader(strings.NewReader(raw)), samples: map[string]string{}}
	for i, want := range []struct {
		code int
		keep bool
	}{{200, true}, {500, true}, {200, false}} {
		code, keep, err := w.readResponse()
		if err != nil || code != want.code || keep != want.keep {
			t.Fatalf("response %d: code %d keep %v err %v; want %+v", i, code, keep, err, want)
		}
	}
	if w.samples["500"] != "oops" {
		t.Errorf("sample %q", w.samples["500"])
	}
	if _, _, err := w.readResponse(); err == nil {
		t.Error("read past the end")
	}
}

func TestTemplate(t *testing.T) {
	if Template("no placeholder") != nil {
		t.Error("a template without placeholder")
	}
	f := Template("{{counter}}-a-{{counter}}")
	if got := string(f(42, []byte("x"))); got != "x42-a-42" {
		t.Errorf("got %q", got)
	}
}
