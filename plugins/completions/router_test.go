package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/svcplatform/svc/internal/openaitest"
)

const reply = "Paris is the capital of France."

// routerBundle is a router over fake upstreams, tried in the order given.
type routerBundle struct {
	rt  *router
	ups []*openaitest.Upstream
}

func setupRouter(t *testing.T, timeout string, n int) routerBundle {
	t.Helper()
	var b routerBundle
	var cfg []upstreamConfig
	for i := range n {
		u := openaitest.New(t, reply)
		u.Key = fmt.Sprintf("key-%d", i)
		b.ups = append(b.ups, u)
		cfg = append(cfg, upstreamConfig{Name: fmt.Sprintf("up%d", i), BaseURL: u.BaseURL,
			APIKeyEnv: fmt.Sprintf("KEY_%d", i), Models: []string{"m"}, Timeout: timeout})
	}
	raw, _ := json.Marshal(config{Upstreams: cfg})
	ups, _, err := parseConfig(string(raw), func(k string) string { return "key-" + strings.TrimPrefix(k, "KEY_") })
	if err != nil {
		t.Fatal(err)
	}
	b.rt = newRouter(ups, slog.New(slog.NewTextHandler(io.Discard, nil)), newMetrics())
	b.rt.draw = func(int) int { return 0 } // configuration order
	return b
}

func mustParse(t *testing.T, body string) *chatRequest {
	t.Helper()
	req, e := parseRequest([]byte(body))
	if e != nil {
		t.Fatalf("parse %s: %v", body, e)
	}
	return req
}

const plainBody = `{"model":"m","messages":[{"role":"user","content":"Capital of France?"}],"x_new_field":{"a":1}}`
const streamBody = `{"model":"m","stream":true,"messages":[{"role":"user","content":"Capital of France?"}]}`

func TestANonStreamedAnswerComesBackAsTheUpstreamWroteItWithItsUsage(t *testing.T) {
	t.Parallel()
	b := setupRouter(t, "5s", 1)
	body, u, name, _, err := b.rt.complete(context.Background(), mustParse(t, plainBody))
	if err != nil {
		t.Fatal(err)
	}
	var c completion
	if err := json.Unmarshal(body, &c); err != nil || c.Choices[0].Message.Content == nil || *c.Choices[0].Message.Content != reply {
		t.Fatalf("answer %s (%v)", body, err)
	}
	if p, cpl := b.ups[0].Usage(1); u.PromptTokens != p || u.CompletionTokens != cpl || name != "up0" {
		t.Fatalf("usage %+v from %s", u, name)
	}
	got := b.ups[0].Requests()[0]
	if got.Authorization != "Bearer key-0" {
		t.Fatalf("upstream saw Authorization %q", got.Authorization)
	}
	if _, ok := got.Body["x_new_field"]; !ok {
		t.Fatalf("unknown field not passed to the upstream: %v", got.Body)
	}
}

// collect streams a request and returns the events the client would see.
func collect(t *testing.T, rt *router, body string) ([]string, streamResult, error) {
	t.Helper()
	var events []string
	res, err := rt.stream(context.Background(), mustParse(t, body), func(b []byte, _ bool) error {
		events = append(events, string(b))
		return nil
	}, func(time.Duration) {})
	return events, res, err
}

// text joins the content deltas of chunk events.
func text(t *testing.T, events []string) string {
	var s strings.Builder
	for _, ev := range events {
		if ev == "[DONE]" || strings.Contains(ev, `"error"`) {
			continue
		}
		var c struct {
			Choices []struct {
				Delta struct{ Content string } `json:"delta"`
			} `json:"choices"`
		}
		if err := json.Unmarshal([]byte(ev), &c); err != nil {
			t.Fatalf("event %q: %v", ev, err)
		}
		for _, ch := range c.Choices {
			s.WriteString(ch.Delta.Content)
		}
	}
	return s.String()
}

func TestAStreamArrivesWholeWhateverItsChunkBoundariesAndUsageOnlyWhenAsked(t *testing.T) {
	t.Parallel()
	b := setupRouter(t, "5s", 1)
	events, res, err := collect(t, b.rt, streamBody)
	if err != nil {
		t.Fatal(err)
	}
	if got := text(t, events); got != reply || events[len(events)-1] != "[DONE]" || !res.complete {
		t.Fatalf("streamed %q, events %q", got, events)
	}
	for _, ev := range events {
		if strings.Contains(ev, `"usage"`) {
			t.Fatalf("the client did not ask for usage but got %s", ev)
		}
	}
	if p, c := b.ups[0].Usage(1); res.usage.PromptTokens != p || res.usage.CompletionTokens != c {
		t.Fatalf("usage recorded %+v", res.usage)
	}
	so, _ := b.ups[0].Requests()[0].Body["stream_options"].(map[string]any)
	if so["include_usage"] != true {
		t.Fatalf("the upstream was not asked for usage: %v", b.ups[0].Requests()[0].Body)
	}

	withUsage := strings.Replace(streamBody, `"stream":true`, `"stream":true,"stream_options":{"include_usage":true}`, 1)
	events, _, err = collect(t, b.rt, withUsage)
	if err != nil {
		t.Fatal(err)
	}
	if last := events[len(events)-2]; !strings.Contains(last, `"usage"`) || !strings.Contains(last, `"choices":[]`) {
		t.Fatalf("usage chunk missing before [DONE]: %q", events)
	}
}

func TestFailuresBeforeTheFirstByteGoToTheNextUpstream(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		fail   openaitest.Failure
		body   string
		stream bool
	}{
		{"429 with Retry-After", openaitest.RateLimit, plainBody, false},
		{"500", openaitest.ServerError, plainBody, false},
		{"a hang past the timeout", openaitest.Hang, plainBody, false},
		{"a stream broken before its first event", openaitest.BreakBeforeFirstEvent, streamBody, true},
		{"a 429 on a stream", openaitest.RateLimit, streamBody, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setupRouter(t, "1s", 2)
			b.ups[0].FailNext(tc.fail)
			var err error
			var answered string
			if tc.stream {
				var events []string
				var res streamResult
				events, res, err = collect(t, b.rt, tc.body)
				answered = res.upstream
				if err == nil && text(t, events) != reply {
					t.Fatalf("streamed %q", events)
				}
			} else {
				_, _, answered, _, err = b.rt.complete(context.Background(), mustParse(t, tc.body))
			}
			if err != nil || answered != "up1" {
				t.Fatalf("answered by %q, error %v", answered, err)
			}
			if n0, n1 := len(b.ups[0].Requests()), len(b.ups[1].Requests()); n0 != 1 || n1 != 1 {
				t.Fatalf("requests: first upstream %d, second %d", n0, n1)
			}
		})
	}
}

func TestAStreamBrokenMidAnswerIsCutWithAnErrorEventAndNeverRetried(t *testing.T) {
	t.Parallel()
	b := setupRouter(t, "5s", 2)
	b.ups[0].FailNext(openaitest.BreakMidStream)
	events, res, err := collect(t, b.rt, streamBody)
	if err != nil {
		t.Fatal(err)
	}
	last := events[len(events)-1]
	if !strings.Contains(last, `"upstream_stream_broken"`) || res.complete {
		t.Fatalf("last event %q", last)
	}
	if got := text(t, events); got == "" || got == reply {
		t.Fatalf("the client saw %q before the cut", got)
	}
	if n := len(b.ups[1].Requests()); n != 0 {
		t.Fatalf("the second upstream was called %d times after bytes reached the client", n)
	}
}

func TestAStreamStalledMidAnswerIsCutWithAnErrorEventAndCountsAgainstTheUpstream(t *testing.T) {
	t.Parallel()
	b := setupRouter(t, "5s", 2)
	b.rt.upstreams[0].ttft = 300 * time.Millisecond
	b.ups[0].FailNext(openaitest.StallMidStream)
	events, res, err := collect(t, b.rt, streamBody)
	if err != nil {
		t.Fatal(err)
	}
	last := events[len(events)-1]
	if !strings.Contains(last, `"upstream_stream_stalled"`) || !strings.Contains(last, "stopped sending mid-answer") || res.complete {
		t.Fatalf("last event %q", last)
	}
	if got, want := text(t, events), " Paris is"; got != want {
		t.Fatalf("the client saw %q before the cut, want %q", got, want)
	}
	if n := len(b.ups[1].Requests()); n != 0 {
		t.Fatalf("the second upstream was called %d times after bytes reached the client", n)
	}
	if res.usage.CompletionTokens != 2 {
		t.Fatalf("usage %+v: want the two streamed tokens", res.usage)
	}
	if st := b.rt.upstreams[0].breaker.snapshot(); !strings.Contains(st.LastError, "stalled for 300ms") {
		t.Fatalf("breaker's last error %q", st.LastError)
	}
}

func TestWhenEveryUpstreamIsRateLimitedTheAnswerIs429WithRetryAfter(t *testing.T) {
	t.Parallel()
	b := setupRouter(t, "1s", 1)
	b.ups[0].Always(openaitest.RateLimit)
	_, _, _, _, err := b.rt.complete(context.Background(), mustParse(t, plainBody))
	var ae *apiError
	if !errors.As(err, &ae) || ae.Status != http.StatusTooManyRequests || ae.RetryAfter < 1 {
		t.Fatalf("got %v", err)
	}
	// Retry-After (1 s) was respected: one retry after it, within the 1 s
	// budget it does not fit, so exactly one call.
	if n := len(b.ups[0].Requests()); n != 1 {
		t.Fatalf("the rate-limited upstream was called %d times", n)
	}
}

func TestAnUpstreamRefusingTheRequestIsPassedThroughAndNotRetried(t *testing.T) {
	t.Parallel()
	b := setupRouter(t, "5s", 2)
	b.ups[0].Key = "another key" // the fake answers 401, which is retried…
	_, _, name, _, err := b.rt.complete(context.Background(), mustParse(t, plainBody))
	if err != nil || name != "up1" {
		t.Fatalf("a 401 (bad key) must go to the next upstream: %v %s", err, name)
	}
	// …but a 400 about the request itself is the client's.
	b2 := setupRouter(t, "5s", 2)
	_, _, _, _, err = b2.rt.complete(context.Background(), mustParse(t, `{"model":"m","messages":[{"role":"user","content":"x"}],"stream":false,"response_format":"bad"}`))
	if err != nil {
		t.Fatal(err) // the fake accepts anything JSON
	}
}

func TestAnUpstreamThatKeepsFailingIsTakenOutAndTheNextRequestSkipsIt(t *testing.T) {
	t.Parallel()
	b := setupRouter(t, "5s", 2)
	b.ups[0].Always(openaitest.ServerError)
	for range breakerThreshold {
		if _, _, name, _, err := b.rt.complete(context.Background(), mustParse(t, plainBody)); err != nil || name != "up1" {
			t.Fatalf("answered by %s: %v", name, err)
		}
	}
	if s := b.rt.upstreams[0].breaker.snapshot(); s.State != "cooling_down" || s.Until.IsZero() || !strings.Contains(s.LastError, "500") {
		t.Fatalf("first upstream state %+v", s)
	}
	before := len(b.ups[0].Requests())
	if _, _, name, _, err := b.rt.complete(context.Background(), mustParse(t, plainBody)); err != nil || name != "up1" {
		t.Fatalf("answered by %s: %v", name, err)
	}
	if after := len(b.ups[0].Requests()); after != before {
		t.Fatalf("an open breaker let %d calls through", after-before)
	}
}

func TestAClientThatLeavesCancelsTheUpstreamRequest(t *testing.T) {
	t.Parallel()
	b := setupRouter(t, "30s", 1)
	b.ups[0].Always(openaitest.Hang)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, _, _, _, err := b.rt.complete(ctx, mustParse(t, plainBody))
		done <- err
	}()
	for len(b.ups[0].Requests()) == 0 {
		time.Sleep(time.Millisecond)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v", err)
	}
	if s := b.rt.upstreams[0].breaker.snapshot(); s.State != "healthy" || s.LastError != "" {
		t.Fatalf("a client leaving counted against the upstream: %+v", s)
	}
}

func TestUpstreamBodyKeepsTheClientsFieldsAndAsksForUsage(t *testing.T) {
	t.Parallel()
	req := mustParse(t, `{"model":"m","stream":true,"stream_options":{"include_usage":false,"x":1},"messages":[{"role":"user","content":"a"}],"seed":7}`)
	var got map[string]any
	if err := json.Unmarshal(req.upstreamBody(), &got); err != nil {
		t.Fatal(err)
	}
	so := got["stream_options"].(map[string]any)
	if so["include_usage"] != true || so["x"] != float64(1) || got["seed"] != float64(7) {
		t.Fatalf("upstream body %v", got)
	}
	if !bytes.HasPrefix(req.upstreamBody(), []byte(`{"model":"m"`)) {
		t.Fatalf("field order changed: %s", req.upstreamBody())
	}
}

func TestUpstreamBodyIsTheClientsOwnUnlessAKeyIsSentTwice(t *testing.T) {
	t.Parallel()
	body := `{"model":"m","messages":[{"role":"user","content":"a"}] , "seed":7}`
	if got := mustParse(t, body).upstreamBody(); string(got) != body {
		t.Fatalf("a body needing no change was rewritten: %s", got)
	}
	// The router routed on the last "model"; the upstream must see only it.
	got := mustParse(t, `{"model":"other","model":"m","messages":[{"role":"user","content":"a"}]}`).upstreamBody()
	if string(got) != `{"model":"m","messages":[{"role":"user","content":"a"}]}` {
		t.Fatalf("upstream body %s", got)
	}
}

// FuzzCompletionUsage: an upstream's answer is taken as a chat completion,
// and its usage read, exactly when a full decode of its top level (exact
// keys, the last repeated key winning) finds an array of choices and a
// usage object or none.
func FuzzCompletionUsage(f *testing.F) {
	for _, s := range []string{benchAnswer, `{"choices":[]}`, `{"choices":null}`, `{"choices":[],"usage":null}`,
		`{"choices":[],"usage":{"prompt_tokens":"x"}}`, `{"choices":{}}`, `[]`, `{"usage":{"prompt_tokens":1},"choices":[1],"usage":{"completion_tokens":2}}`, `{"choices":[]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got, ok := completionUsage(b)
		var m map[string]json.RawMessage
		wantOK := json.Unmarshal(b, &m) == nil && m != nil
		var choices []json.RawMessage
		wantOK = wantOK && json.Unmarshal(m["choices"], &choices) == nil && choices != nil
		var want *usage
		if raw, has := m["usage"]; wantOK && has && string(raw) != "null" {
			want = &usage{}
			wantOK = json.Unmarshal(raw, want) == nil
		}
		if ok != wantOK {
			t.Fatalf("%q: taken %v, a full decode says %v", b, ok, wantOK)
		}
		if ok && (got == nil) != (want == nil) || got != nil && want != nil && *got != *want {
			t.Fatalf("%q: usage %+v, a full decode says %+v", b, got, want)
		}
	})
}

// FuzzChunkUsage: a stream chunk's usage is read, and its choices found
// empty or not, exactly as a full decode of its top level (exact keys, the
// last repeated key winning) reads them.
func FuzzChunkUsage(f *testing.F) {
	for _, s := range []string{`{"choices":[],"usage":{"prompt_tokens":9,"completion_tokens":3,"total_tokens":12}}`,
		`{"choices":[ ],"usage":{"prompt_tokens":1}}`, `{"choices":[{"index":0}],"usage":{"prompt_tokens":1}}`, `{"usage":null}`,
		`{"choices":null,"usage":{}}`, `{"choices":{},"usage":{}}`, `{"usage":5}`, `{"usage":{"prompt_tokens":"x"}}`, `{"usage":{}`, `[]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got, some, ok := chunkUsage(b)
		var m map[string]json.RawMessage
		wantOK := json.Unmarshal(b, &m) == nil && m != nil
		var choices []json.RawMessage
		if raw, has := m["choices"]; wantOK && has {
			wantOK = json.Unmarshal(raw, &choices) == nil
		}
		var want *usage
		if raw, has := m["usage"]; wantOK && has && string(raw) != "null" {
			want = &usage{}
			wantOK = json.Unmarshal(raw, want) == nil
		}
		if ok != wantOK {
			t.Fatalf("%q: read %v, a full decode says %v", b, ok, wantOK)
		}
		if !ok {
			return
		}
		if some != (len(choices) > 0) {
			t.Fatalf("%q: choices %v, a full decode finds %d", b, some, len(choices))
		}
		if (got == nil) != (want == nil) || got != nil && *got != *want {
			t.Fatalf("%q: usage %+v, a full decode says %+v", b, got, want)
		}
	})
}
