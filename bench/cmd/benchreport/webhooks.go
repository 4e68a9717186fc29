package main

// The webhook figures (issue 34, shared/PERFORMANCE.md): signed deliveries
// per second to a local receiver beside that receiver's own rate from a
// plain Go client, the commit → delivery latency at a fixed offered rate,
// and the post write while an app receives every post event beside the
// same write without a subscriber. Measurement only; see bench/README.md.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/svcplatform/svc/bench"
	"github.com/svcplatform/svc/sdk/event"
)

const (
	// hookWorkers is the gateway's default number of delivery attempts in
	// flight (webhook.DefaultWorkers): the reference client's concurrency.
	hookWorkers = 64
	// hookVerifyToken answers the subscription's verification request.
	hookVerifyToken = "benchreport"
)

// hookReceiver is the local webhook endpoint: it answers the verification
// request and 200 to every delivery, counting the signed ones; while
// tracking, it notes when each event id first arrived. It verifies nothing
// heavy (no HMAC), so that its own cost stays small beside the sender's.
type hookReceiver struct {
	srv    *http.Server
	url    string
	signed atomic.Int64
	// last is the arrival of the latest delivery, in Unix ns.
	last     atomic.Int64
	tracking atomic.Bool
	mu       sync.Mutex
	arrived  map[string]time.Time
}

func startHookReceiver() (*hookReceiver, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	h := &hookReceiver{url: "http://" + ln.Addr().String() + "/hook", arrived: map[string]time.Time{}}
	h.srv = &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = h.srv.Serve(ln) }()
	return h, nil
}

func (h *hookReceiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if req.Method == http.MethodGet {
		_, _ = io.WriteString(w, req.URL.Query().Get("hub.challenge"))
		return
	}
	raw, _ := io.ReadAll(req.Body)
	now := time.Now()
	if req.Header.Get("X-Svc-Signature-256") != "" {
		h.signed.Add(1)
	}
	h.last.Store(now.UnixNano())
	if h.tracking.Load() {
		var body struct {
			ID string `json:"id"`
		}
		if json.Unmarshal(raw, &body) == nil && body.ID != "" {
			h.mu.Lock()
			if _, dup := h.arrived[body.ID]; !dup {
				h.arrived[body.ID] = now
			}
			h.mu.Unlock()
		}
	}
	w.WriteHeader(http.StatusOK)
}

func (h *hookReceiver) close() { _ = h.srv.Close() }

// waitSigned waits until the receiver has counted n signed deliveries, or
// until timeout; it returns the count reached.
func (h *hookReceiver) waitSigned(ctx context.Context, n int64, timeout time.Duration) int64 {
	deadline := time.Now().Add(timeout)
	for h.signed.Load() < n && time.Now().Before(deadline) && ctx.Err() == nil {
		time.Sleep(2 * time.Millisecond)
	}
	return h.signed.Load()
}

// waitQuiet waits until no delivery has arrived for quiet, or until
// timeout; it returns the count of signed deliveries then.
func (h *hookReceiver) waitQuiet(ctx context.Context, quiet, timeout time.Duration) int64 {
	deadline := time.Now().Add(timeout)
	for time.Since(time.Unix(0, h.last.Load())) < quiet && time.Now().Before(deadline) && ctx.Err() == nil {
		time.Sleep(10 * time.Millisecond)
	}
	return h.signed.Load()
}

// webhooks measures the three webhook rows.
func (r *runner) webhooks(ctx context.Context) {
	const (
		rowRate  = "Webhook delivery to a local receiver, signed (deliveries/s)"
		rowLat   = "Webhook delivery, commit → delivery latency at 1,000 events/s"
		rowWrite = "Graph post write while an app's webhook receives every post event"
	)
	blocked := func(err error) {
		for _, w := range []string{rowRate, rowLat, rowWrite} {
			r.add(bench.Row{What: w, Verdict: "blocked: " + firstLine(err.Error())})
		}
	}
	rcv, err := startHookReceiver()
	if err != nil {
		blocked(err)
		return
	}
	defer rcv.close()
	pool, err := pgxpool.New(ctx, r.db.URL)
	if err != nil {
		blocked(err)
		return
	}
	defer pool.Close()
	// The seed links the Page to the app for svcchat only; an app gets the
	// events of the products its link carries (CONTRACT §15).
	r.step("webhooks: link the Page to the app with book")
	if err := r.graphCall(ctx, http.MethodPost, r.token, "app/"+r.creds.App.ID+"/page_links",
		map[string]any{"page_id": r.creds.Page.ID, "products": []string{"svcchat", "book"}}); err != nil {
		blocked(fmt.Errorf("link the Page with book: %w", err))
		return
	}

	plain := r.hookWrite(ctx, "plain")
	r.step("webhooks: subscribe the app to book.post.created at " + rcv.url)
	subscriptions := "app/" + r.creds.App.ID + "/subscriptions"
	if err := r.graphCall(ctx, http.MethodPost, r.creds.App.APIKey, subscriptions,
		map[string]any{"callback_url": rcv.url, "events": []string{"book.post.created"}, "verify_token": hookVerifyToken}); err != nil {
		blocked(fmt.Errorf("subscribe: %w", err))
		return
	}
	r.writeWithHooks(ctx, rowWrite, plain, rcv)
	r.deliveryRate(ctx, rowRate, pool, rcv)
	r.deliveryLatency(ctx, rowLat, pool, rcv)
	// The figures after (the curves' post write) are without a subscriber.
	if err := r.graphCall(ctx, http.MethodDelete, r.creds.App.APIKey, subscriptions, nil); err != nil {
		r.notes = append(r.notes, "Removing the benchmark's webhook subscription failed, so the figures after the webhook rows include deliveries: "+err.Error())
	}
}

// hookWrite runs the post write load of the write row (shorter: at most
// 5 s), labelled for the details.
func (r *runner) hookWrite(ctx context.Context, label string) *bench.Result {
	body := `{"content":"Webhook benchmark post {{counter}}: ☕ 咖啡 🚀","audience":"everyone"}`
	dur := min(r.o.dur, 5*time.Second)
	r.step(fmt.Sprintf("webhooks: Graph post write, %d connections, %s (%s)", r.o.writeConns, dur, label))
	load := bench.Load{Method: "POST", URL: r.graphURL(), Connections: r.o.writeConns, Duration: dur,
		Warmup: min(r.o.warmup, time.Second), BodyFunc: bench.Template(body),
		Headers: []bench.Header{r.authHeader(), {Name: "Content-Type", Value: "application/json"}}}
	res, a, b, err := r.runLoad(ctx, load)
	if err != nil {
		r.notes = append(r.notes, "Webhook write ("+label+") failed: "+err.Error())
		return nil
	}
	r.details = append(r.details, "**Graph post write, "+label+"** — "+strings.TrimSpace(res.String())+"\n  "+cpuLine(a, b, res.Requests))
	return res
}

func (r *runner) writeWithHooks(ctx context.Context, what string, plain *bench.Result, rcv *hookReceiver) {
	dur := min(r.o.dur, 5*time.Second)
	row := bench.Row{What: fmt.Sprintf("%s, %d connections", what, r.o.writeConns),
		Target:  "within 80 % of the write without subscribers (≥ 80 %)",
		Command: fmt.Sprintf("go run ./bench/cmd/benchreport -only webhooks  # the write row's load for %s, with and then without an app subscribed to book.post.created", dur)}
	before := rcv.signed.Load()
	hooked := r.hookWrite(ctx, "an app subscribed to book.post.created")
	if plain == nil || hooked == nil {
		row.Verdict = "failed: see the notes"
		r.add(row)
		return
	}
	// Every post made is an event for the app: wait for those of the
	// measured window at least, then for the receiver to fall quiet (the
	// warmup's), so that the rows after start from an empty backlog.
	posts := int64(hooked.Status["200"])
	rcv.waitSigned(ctx, before+posts, 30*time.Second)
	got := rcv.waitQuiet(ctx, 500*time.Millisecond, 30*time.Second) - before
	row.Ours = fmt.Sprintf("%s posts/s, p50 %s, p99 %s; %d deliveries received (the %d posts measured, and the warmup's)",
		bench.Num(hooked.OKPerSec), bench.Ms(hooked.Latency.P50), bench.Ms(hooked.Latency.P99), got, posts)
	if hooked.ErrorTotal > 0 {
		row.Ours += fmt.Sprintf("; %d errors", hooked.ErrorTotal)
	}
	row.Reference = fmt.Sprintf("the same write just before, no subscriber: %s posts/s, p50 %s, p99 %s",
		bench.Num(plain.OKPerSec), bench.Ms(plain.Latency.P50), bench.Ms(plain.Latency.P99))
	ratio := hooked.OKPerSec / plain.OKPerSec
	row.Ratio = bench.Pct(ratio)
	row.Verdict = bench.Verdict(true, ratio >= 0.8 && hooked.ErrorTotal == 0 && got >= posts)
	r.raw["webhook_write_plain"] = plain
	r.raw["webhook_write_hooked"] = hooked
	r.add(row)
}

// benchEvent is a book.post.created event on the seeded Page, as book
// emits it.
func (r *runner) benchEvent(n int) event.Event {
	return event.Event{Type: "book.post.created", PageID: r.creds.Page.ID,
		Data: map[string]any{"postId": fmt.Sprint(1_000_000_000 + n), "pageId": r.creds.Page.ID,
			"content": fmt.Sprintf("Webhook benchmark event %d: ☕ 咖啡 🚀", n), "audience": "everyone"}}
}

// deliveryRate commits -webhook-events events in one transaction (the
// outbox path the products write through, sdk/event.Emit) and times their
// delivery; then the receiver alone, from a plain Go client at the
// gateway's concurrency.
func (r *runner) deliveryRate(ctx context.Context, what string, pool *pgxpool.Pool, rcv *hookReceiver) {
	n := r.o.hookEvents
	row := bench.Row{What: what, Target: "≥ 5,000 deliveries/s",
		Command: fmt.Sprintf("go run ./bench/cmd/benchreport -only webhooks -webhook-events %d  # %d book.post.created events committed at once through sdk/event.Emit, delivered by the gateway's %d workers", n, n, hookWorkers)}
	r.step(fmt.Sprintf("webhooks: %d events committed at once, delivered to the local receiver", n))
	before := rcv.signed.Load()
	a := r.cpu()
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		for i := range n {
			if _, err := event.Emit(ctx, tx, r.benchEvent(i)); err != nil {
				return err
			}
		}
		return nil
	})
	committed := time.Now()
	if err != nil {
		row.Verdict = "failed: " + firstLine(err.Error())
		r.add(row)
		return
	}
	got := rcv.waitSigned(ctx, before+int64(n), 30*time.Second) - before
	b := r.cpu()
	last := time.Unix(0, rcv.last.Load())
	elapsed := last.Sub(committed).Seconds()
	rate := 0.0
	if elapsed > 0 {
		rate = float64(got) / elapsed
	}
	r.raw["webhook_deliveries_per_sec"] = rate
	row.Ours = fmt.Sprintf("%s deliveries/s (%d of %d in %.2f s from the commit to the last arrival)", bench.Num(rate), got, n, elapsed)
	r.details = append(r.details, fmt.Sprintf("**Webhook delivery** — %d events, %d delivered in %.2f s\n  %s", n, got, elapsed,
		strings.Replace(cpuLineClient(a, b, uint64(max(got, 1)), b.self-a.self, "benchreport (the receiver, and the commit)"), "per request", "per delivery", 1)))

	r.step(fmt.Sprintf("webhooks: the receiver alone, plain Go client, %d goroutines", hookWorkers))
	refRate, refErr := receiverRate(ctx, rcv.url, hookWorkers, min(r.o.dur, 3*time.Second))
	if refErr != nil {
		row.Reference = "plain Go client failed: " + firstLine(refErr.Error())
	} else {
		r.raw["webhook_receiver_direct_per_sec"] = refRate
		row.Reference = fmt.Sprintf("the receiver hit directly by a plain Go net/http client, %d goroutines, same body size and headers: %s req/s", hookWorkers, bench.Num(refRate))
		row.Ratio = bench.Pct(rate / refRate)
	}
	row.Verdict = bench.Verdict(true, rate >= 5000 && got == int64(n))
	r.add(row)
}

// receiverRate is the reference: POSTs of a delivery-sized signed-looking
// body from conns goroutines sharing one http.Client, for d after a 1 s
// warmup; it returns the answers per second.
func receiverRate(ctx context.Context, url string, conns int, d time.Duration) (float64, error) {
	body := bytes.Repeat([]byte("x"), 400)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: conns, MaxConnsPerHost: conns}}
	defer client.CloseIdleConnections()
	var count atomic.Int64
	var measuring atomic.Bool
	var firstErr error
	var errOnce sync.Once
	start := time.Now()
	warmEnd := start.Add(time.Second)
	end := warmEnd.Add(d)
	var wg sync.WaitGroup
	for range conns {
		wg.Go(func() {
			for time.Now().Before(end) && ctx.Err() == nil {
				req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("X-Svc-Signature-256", "sha256=0000000000000000000000000000000000000000000000000000000000000000")
				req.Header.Set("X-Svc-Event", "book.post.created")
				res, err := client.Do(req)
				if err != nil {
					errOnce.Do(func() { firstErr = err })
					return
				}
				_, _ = io.Copy(io.Discard, res.Body)
				_ = res.Body.Close()
				if measuring.Load() {
					count.Add(1)
				}
			}
		})
	}
	time.AfterFunc(time.Until(warmEnd), func() { measuring.Store(true) })
	wg.Wait()
	if firstErr != nil {
		return 0, firstErr
	}
	if count.Load() == 0 {
		return 0, errors.New("no answer")
	}
	return float64(count.Load()) / d.Seconds(), nil
}

// deliveryLatency commits events one per transaction at -webhook-rate per
// second for a few seconds, from 8 connections so that one slow commit does
// not hold the next back, and measures from each commit's return to the
// receiver's arrival (no coordinated omission: a late commit counts from
// its return, and the emitters are never more than 8 events behind).
func (r *runner) deliveryLatency(ctx context.Context, what string, pool *pgxpool.Pool, rcv *hookReceiver) {
	const emitters = 8
	rate := r.o.hookRate
	dur := min(r.o.dur, 5*time.Second)
	total := int(float64(rate) * dur.Seconds())
	row := bench.Row{What: what, Target: "p99 < 100 ms at 1,000 events/s",
		Command:   fmt.Sprintf("go run ./bench/cmd/benchreport -only webhooks -webhook-rate %d  # %s of events, one transaction each through sdk/event.Emit, %d emitters", rate, dur, emitters),
		Reference: "— (an absolute bound)"}
	// A backlog left by the rate figure would count in these latencies:
	// wait for it to drain (bounded), and say so if it did not.
	if rcv.waitQuiet(ctx, 500*time.Millisecond, 30*time.Second); time.Since(time.Unix(0, rcv.last.Load())) < 500*time.Millisecond {
		r.notes = append(r.notes, "The webhook latency figure started while deliveries of the rate figure were still arriving: its latencies include that backlog.")
	}
	r.step(fmt.Sprintf("webhooks: %d events/s for %s, commit → delivery", rate, dur))
	rcv.mu.Lock()
	clear(rcv.arrived)
	rcv.mu.Unlock()
	rcv.tracking.Store(true)
	defer rcv.tracking.Store(false)
	ids := make([]string, total)
	committed := make([]time.Time, total)
	var next atomic.Int64
	var failed atomic.Int64
	start := time.Now()
	var wg sync.WaitGroup
	for range emitters {
		wg.Go(func() {
			for ctx.Err() == nil {
				i := int(next.Add(1)) - 1
				if i >= total {
					return
				}
				time.Sleep(time.Until(start.Add(time.Duration(i) * time.Second / time.Duration(rate))))
				err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
					var err error
					ids[i], err = event.Emit(ctx, tx, r.benchEvent(1_000_000+i))
					return err
				})
				committed[i] = time.Now()
				if err != nil {
					failed.Add(1)
				}
			}
		})
	}
	wg.Wait()
	achieved := float64(total) / time.Since(start).Seconds()
	if f := failed.Load(); f > 0 {
		row.Verdict = fmt.Sprintf("failed: %d of %d commits failed", f, total)
		r.add(row)
		return
	}
	var lat []time.Duration
	deadline := time.Now().Add(30 * time.Second)
	for i := 0; i < total && ctx.Err() == nil; {
		rcv.mu.Lock()
		at, ok := rcv.arrived[ids[i]]
		rcv.mu.Unlock()
		if ok {
			lat = append(lat, at.Sub(committed[i]))
			i++
			continue
		}
		if time.Now().After(deadline) {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	if len(lat) == 0 {
		row.Verdict = "failed: no event delivered"
		r.add(row)
		return
	}
	slices.Sort(lat)
	pct := func(p float64) time.Duration { return lat[int(p*float64(len(lat)-1))] }
	ms := func(d time.Duration) string { return bench.Ms(float64(d.Microseconds())) }
	r.raw["webhook_latency_ms"] = map[string]float64{"p50": float64(pct(0.5).Microseconds()) / 1e3,
		"p99": float64(pct(0.99).Microseconds()) / 1e3, "max": float64(lat[len(lat)-1].Microseconds()) / 1e3, "events_per_sec": achieved}
	row.Ours = fmt.Sprintf("p50 %s, p99 %s, max %s; %s events/s committed, %d of %d delivered",
		ms(pct(0.5)), ms(pct(0.99)), ms(lat[len(lat)-1]), bench.Num(achieved), len(lat), total)
	row.Verdict = bench.Verdict(true, pct(0.99) < 100*time.Millisecond && len(lat) == total && achieved >= 0.95*float64(rate))
	r.add(row)
}

// graphCall sends one Graph call and wants a 200.
func (r *runner) graphCall(ctx context.Context, method, token, node string, fields map[string]any) error {
	b, _ := json.Marshal(fields)
	req, err := http.NewRequestWithContext(ctx, method, r.gw.URL+"/api/v1/graph?node="+node, bytes.NewReader(b))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(res.Body, 4096))
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("%s %s: %d %s", method, node, res.StatusCode, bytes.TrimSpace(body))
	}
	return nil
}
