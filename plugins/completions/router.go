package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"sort"
	"sync/atomic"
	"time"

	"github.com/svcplatform/svc/internal/jsonobj"
)

// router sends a model's requests to the upstreams serving it.
type router struct {
	upstreams []*upstream
	byModel   map[string][]*upstream
	models    []string      // sorted, svc-builtin excluded
	client    *http.Client  // https upstreams, and any behind a proxy
	direct    *directClient // plain http upstreams (see directClient)
	log       *slog.Logger
	metrics   *metrics
	// draw picks an index in [0, n) for the weighted order; tests make it
	// deterministic.
	draw func(n int) int
}

func newRouter(ups []*upstream, log *slog.Logger, m *metrics) *router {
	rt := &router{upstreams: ups, byModel: map[string][]*upstream{}, log: log, metrics: m, draw: rand.IntN}
	for _, u := range ups {
		for _, name := range u.models {
			if len(rt.byModel[name]) == 0 {
				rt.models = append(rt.models, name)
			}
			rt.byModel[name] = append(rt.byModel[name], u)
		}
	}
	sort.Strings(rt.models)
	for _, u := range ups {
		u.breaker.probe = func() error { return rt.probe(u) }
		u.useDirect()
	}
	rt.direct = newDirectClient()
	rt.client = &http.Client{Transport: &http.Transport{
		Proxy:               http.ProxyFromEnvironment,
		MaxIdleConns:        256,
		MaxIdleConnsPerHost: 128,
		IdleConnTimeout:     90 * time.Second,
		ForceAttemptHTTP2:   true,
	}}
	return rt
}

// serves tells whether a model is routed to some upstream.
func (rt *router) serves(model string) bool { return len(rt.byModel[model]) > 0 }

// defaultModel is what Complete uses when the caller names no model: the
// first configured model, else svc-builtin.
func (rt *router) defaultModel() string {
	if len(rt.upstreams) > 0 {
		return rt.upstreams[0].models[0]
	}
	return builtinModel
}

// order returns the model's upstreams in the order to try them: a weighted
// random draw without replacement, so that weights share the load and a
// failing upstream's requests spread over the others.
func (rt *router) order(model string) []*upstream {
	ups := rt.byModel[model]
	if len(ups) == 1 {
		return ups // nothing to draw; callers only read the slice
	}
	out := make([]*upstream, 0, len(ups))
	left := append([]*upstream(nil), ups...)
	for len(left) > 0 {
		total := 0
		for _, u := range left {
			total += u.weight
		}
		pick := rt.draw(total)
		for i, u := range left {
			if pick < u.weight {
				out = append(out, u)
				left = append(left[:i], left[i+1:]...)
				break
			}
			pick -= u.weight
		}
	}
	return out
}

// opened is an upstream answer that has started: the upstream that gave it
// and its body, and the function that stops the first-byte timer.
type opened struct {
	u       *upstream
	res     *http.Response
	commit  func() // stops the first-byte timer
	release context.CancelFunc
}

// open finds an upstream that answers req with 200, trying the model's
// upstreams in turn as their breakers allow, with backoff between tries and
// Retry-After respected, within a budget of every upstream's timeout
// once (or the caller's deadline, when sooner). ready is called on the 200 answer and decides whether it is
// usable (for a stream: its first event arrived); an error from it counts
// as the upstream's failure. Nothing reaches the client before open
// returns, so every failure here may still go elsewhere.
func (rt *router) open(ctx context.Context, req *chatRequest, ready func(*opened) error) (*opened, error) {
	ups := rt.order(req.Model)
	// The request's budget: each upstream's timeout once, unless the
	// caller's deadline comes first.
	budget := time.Duration(0)
	for _, u := range ups {
		budget += u.timeout
	}
	deadline := time.Now().Add(budget)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	body := req.upstreamBody()
	maxTries := len(ups) + 1
	tries := 0
	var last *attemptError
	for tries < maxTries {
		var earliest time.Time
		for _, u := range ups {
			if tries >= maxTries {
				break
			}
			now := time.Now()
			ok, at := u.breaker.admit(now)
			if !ok {
				if earliest.IsZero() || at.Before(earliest) {
					earliest = at
				}
				continue
			}
			if tries > 0 {
				if err := sleep(ctx, backoff(tries), deadline); err != nil {
					return nil, rt.giveUp(req, last, err)
				}
			}
			tries++
			o, err := rt.try(ctx, u, body, req.Stream, deadline, ready)
			if err == nil {
				u.breaker.record(time.Now(), true, "", 0)
				rt.metrics.attempt(u.name, "ok")
				return o, nil
			}
			var pt *passThrough
			if errors.As(err, &pt) {
				u.breaker.record(time.Now(), true, "", 0) // the upstream works; the request is wrong
				rt.metrics.attempt(u.name, "refused")
				return nil, pt
			}
			if ctx.Err() != nil {
				// The client is gone (no upstream's fault) while this one
				// was answering: usage counts the request against it.
				return nil, &clientGone{upstream: u.name, err: ctx.Err()}
			}
			var ae *attemptError
			if !errors.As(err, &ae) {
				ae = &attemptError{upstream: u.name, reason: err.Error()}
			}
			u.breaker.record(time.Now(), false, ae.reason, ae.retryAfter)
			rt.metrics.attempt(u.name, outcome(ae))
			rt.log.WarnContext(ctx, "upstream failed; trying the next", "upstream", u.name, "model", req.Model, "reason", ae.reason)
			last = ae
		}
		if tries >= maxTries || earliest.IsZero() {
			break
		}
		// Every upstream is cooling down or asked to wait: wait for the
		// first to come back, if that is before the deadline.
		if err := sleep(ctx, time.Until(earliest), deadline); err != nil {
			return nil, rt.giveUp(req, last, err)
		}
	}
	return nil, rt.giveUp(req, last, nil)
}

// try makes one call to one upstream. Its time limit is the upstream's
// timeout for a whole answer, or its time-to-first-token timeout for a
// stream (ready returns once the first token is in).
func (rt *router) try(ctx context.Context, u *upstream, body []byte, stream bool, deadline time.Time, ready func(*opened) error) (*opened, error) {
	limit, what := u.timeout, "no answer within "
	if stream {
		limit, what = u.ttft, "no first token within "
	}
	timeout := min(limit, time.Until(deadline))
	actx, cancel := context.WithCancel(ctx)
	timer := time.AfterFunc(timeout, cancel)
	timedOut := func(err error) error {
		if ctx.Err() == nil && actx.Err() != nil {
			return &attemptError{upstream: u.name, reason: what + timeout.String()}
		}
		return err
	}
	res, err := rt.post(actx, u, body, stream)
	if err != nil {
		timer.Stop()
		err = timedOut(err)
		cancel()
		return nil, err
	}
	o := &opened{u: u, res: res, commit: func() { timer.Stop() }, release: cancel}
	if err := ready(o); err != nil {
		timer.Stop()
		te := timedOut(nil)
		_ = res.Body.Close()
		cancel()
		if te != nil {
			return nil, te
		}
		return nil, &attemptError{upstream: u.name, reason: err.Error()}
	}
	return o, nil
}

// giveUp is the answer when no upstream could serve: 429 when the last
// failure was a rate limit, 503 otherwise.
func (rt *router) giveUp(req *chatRequest, last *attemptError, cause error) error {
	if errors.Is(cause, context.Canceled) {
		return cause
	}
	if last == nil {
		return unavailable(req.Model, false, int(breakerCooldown/time.Second))
	}
	secs := int((last.retryAfter + time.Second - 1) / time.Second)
	return unavailable(req.Model, last.rateLimited, secs)
}

func outcome(e *attemptError) string {
	if e.rateLimited {
		return "rate_limited"
	}
	return "failed"
}

// backoff is the pause before the n-th retry: 25 ms doubling, at most
// 800 ms, with ±20 % jitter.
func backoff(n int) time.Duration {
	d := 25 * time.Millisecond << min(n-1, 5)
	jitter := 0.8 + 0.4*rand.Float64()
	return time.Duration(float64(d) * jitter)
}

// errDeadline: waiting would end after the request's deadline.
var errDeadline = errors.New("the request's deadline would pass while waiting")

// sleep waits d, unless that ends after deadline or ctx ends first.
func sleep(ctx context.Context, d time.Duration, deadline time.Time) error {
	if d <= 0 {
		return nil
	}
	if time.Now().Add(d).After(deadline) {
		return errDeadline
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// clientGone: the caller left, or ran out of time, while an upstream was
// answering. It is no upstream's fault; usage still counts the request.
type clientGone struct {
	upstream string
	err      error
}

func (e *clientGone) Error() string { return e.upstream + ": " + e.err.Error() }
func (e *clientGone) Unwrap() error { return e.err }

// complete answers a request that is not streamed: the upstream's JSON as
// it came, its usage, and the time spent on upstreams.
func (rt *router) complete(ctx context.Context, req *chatRequest) (body []byte, u usage, name string, wait time.Duration, err error) {
	start := time.Now()
	o, err := rt.open(ctx, req, func(o *opened) error {
		b, err := io.ReadAll(io.LimitReader(o.res.Body, maxUpstreamBody))
		if err != nil {
			return errors.New("answer broken: " + transportReason(err))
		}
		got, ok := completionUsage(b)
		if !ok {
			return errors.New("answer is not a chat completion")
		}
		if got != nil {
			u = *got
		} else {
			u = usage{PromptTokens: estimatePromptTokens(req.Messages)}
		}
		body = b
		return nil
	})
	wait = time.Since(start)
	if err != nil {
		return nil, usage{}, "", wait, err
	}
	o.commit()
	_ = o.res.Body.Close()
	o.release()
	return body, u, o.u.name, wait, nil
}

// completionUsage reads a chat.completion answer's usage (nil when it has
// none) and tells whether the answer is one: a JSON object whose choices
// is an array and whose usage, when given, is a usage object. The answer
// is passed on as it came, so only usage is decoded.
func completionUsage(b []byte) (*usage, bool) {
	if !json.Valid(b) {
		return nil, false
	}
	var usageRaw []byte
	choices := false
	if !jsonobj.Members(b, func(key, value []byte) bool {
		switch string(key) { // the last of a repeated key wins, as in encoding/json
		case "choices":
			choices = value[0] == '['
		case "usage":
			usageRaw = value
		}
		return true
	}) || !choices {
		return nil, false
	}
	if usageRaw == nil || string(usageRaw) == "null" {
		return nil, true
	}
	var u usage
	if json.Unmarshal(usageRaw, &u) != nil {
		return nil, false
	}
	return &u, true
}

// chunkUsage reads a stream chunk's usage (nil when it has none) and
// whether its choices has any element; ok is false when the chunk is not
// valid JSON or its usage is not a usage object or its choices not an
// array. Only usage is decoded, as in completionUsage: the chunk is passed
// on as it came.
func chunkUsage(ev []byte) (u *usage, choices, ok bool) {
	if !json.Valid(ev) {
		return nil, false, false
	}
	var usageRaw, choicesRaw []byte
	if !jsonobj.Members(ev, func(key, value []byte) bool {
		switch string(key) { // the last of a repeated key wins, as in encoding/json
		case "choices":
			choicesRaw = value
		case "usage":
			usageRaw = value
		}
		return true
	}) {
		return nil, false, false
	}
	switch {
	case choicesRaw == nil, string(choicesRaw) == "null":
	case choicesRaw[0] == '[':
		rest := bytes.TrimLeft(choicesRaw[1:], " \t\r\n")
		choices = len(rest) > 0 && rest[0] != ']'
	default:
		return nil, false, false
	}
	if usageRaw == nil || string(usageRaw) == "null" {
		return nil, choices, true
	}
	var got usage
	if usageRaw[0] != '{' || json.Unmarshal(usageRaw, &got) != nil {
		return nil, false, false
	}
	return &got, choices, true
}

// probe asks u for a real generation of one token, as the end of its
// cooldown: an upstream whose health check says "ok" while generation is
// broken fails this.
func (rt *router) probe(u *upstream) error {
	ctx, cancel := context.WithTimeout(context.Background(), u.timeout)
	defer cancel()
	body, _ := json.Marshal(map[string]any{"model": u.models[0], "max_tokens": 1,
		"messages": []message{{Role: "user", Content: "Say OK."}}})
	res, err := rt.post(ctx, u, body, false)
	if err != nil {
		rt.metrics.attempt(u.name, "probe_failed")
		var ae *attemptError
		if errors.As(err, &ae) {
			return errors.New(ae.reason)
		}
		return err // a passThrough: the upstream refused even this
	}
	defer func() { _ = res.Body.Close() }()
	var c struct {
		Choices []json.RawMessage `json:"choices"`
	}
	b, err := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	if err != nil || json.Unmarshal(b, &c) != nil || len(c.Choices) == 0 {
		rt.metrics.attempt(u.name, "probe_failed")
		return errors.New("the probe's answer is not a chat completion")
	}
	rt.metrics.attempt(u.name, "probe_ok")
	return nil
}

// streamResult is what a stream left behind, for usage.
type streamResult struct {
	upstream string
	usage    usage
	complete bool // [DONE] was reached
}

// maxHeldEvents bounds the preamble held back before the first token.
const maxHeldEvents = 16

// stream answers a streamed request: once an upstream's first token has
// arrived (the preamble before it, such as the role chunk, is held back, so
// that an upstream stalling before its first token can still be left for
// the next), every event goes to emit (the chunk JSON), ending with
// "[DONE]". onOpen is called once, before the first emit, with the time
// spent on upstreams until then. The usage chunk the router asked for is
// passed on only when the client asked for it too. An error before the
// first emit may go to the client as a refusal; after it, the stream is cut
// with an error event.
//
// The result's usage is the upstream's, or, when its usage chunk never came
// (the client left, the upstream broke off), the tokens forwarded and an
// estimate of the prompt's (see tokens.go).
func (rt *router) stream(ctx context.Context, req *chatRequest, emit emitFunc, onOpen func(wait time.Duration)) (r streamResult, err error) {
	start := time.Now()
	var sse *sseReader
	defer func() {
		if sse != nil {
			sse.release()
		}
	}()
	var held [][]byte
	o, err := rt.open(ctx, req, func(o *opened) error {
		if sse != nil {
			sse.release() // an earlier upstream's, which failed
		}
		sse = newSSEReader(o.res.Body)
		held = held[:0]
		for {
			ev, err := sse.Next()
			if err != nil {
				return errors.New("stream broken before its first token: " + readReason(err))
			}
			held = append(held, append([]byte(nil), ev...))
			if len(held) >= maxHeldEvents || bytes.Equal(ev, doneEvent) || carriesAnswer(ev) {
				return nil
			}
		}
	})
	if err != nil {
		return streamResult{}, err
	}
	// From here on, bytes reach the client: nothing is retried.
	o.commit()
	defer o.release()
	defer func() { _ = o.res.Body.Close() }()
	onOpen(time.Since(start))
	u := o.u
	// A stream that stops mid-answer for the upstream's time-to-first-token
	// timeout is stalled: cut it, and count it against the upstream.
	var stalled atomic.Bool
	// The timer runs only while reading, so that a slow client is not
	// taken for a stalled upstream.
	idle := time.AfterFunc(u.ttft, func() { stalled.Store(true); o.release() })
	idle.Stop()
	defer idle.Stop()

	r.upstream = u.name
	streamed, gotUsage := 0, false
	defer func() {
		if !gotUsage {
			r.usage = usage{PromptTokens: estimatePromptTokens(req.Messages), CompletionTokens: streamed}
			r.usage.TotalTokens = r.usage.PromptTokens + r.usage.CompletionTokens
		}
	}()
	next := func() ([]byte, error) {
		if len(held) > 0 {
			ev := held[0]
			held = held[1:]
			return ev, nil
		}
		idle.Reset(u.ttft)
		ev, err := sse.Next()
		idle.Stop()
		return ev, err
	}
	for {
		ev, err := next()
		if err != nil {
			if ctx.Err() != nil {
				return r, ctx.Err()
			}
			reason, code := "the upstream stream ended without [DONE]", "upstream_stream_broken"
			msg := "The upstream's answer broke off mid-stream; the reply above is incomplete."
			switch {
			case stalled.Load():
				reason, code = "the upstream stream stalled for "+u.ttft.String(), "upstream_stream_stalled"
				msg = "The upstream stopped sending mid-answer; the reply above is incomplete."
			case !errors.Is(err, io.EOF):
				reason = "the upstream stream broke: " + readReason(err)
			}
			u.breaker.record(time.Now(), false, reason, 0)
			rt.metrics.attempt(u.name, "broken")
			rt.log.WarnContext(ctx, "upstream stream cut mid-answer", "upstream", u.name, "model", req.Model, "reason", reason)
			e := &apiError{Status: http.StatusBadGateway, Type: "server_error", Code: strp(code), Message: msg}
			return r, emit(e.body(), false)
		}
		if bytes.Equal(ev, doneEvent) {
			r.complete = true
			return r, emit(doneEvent, false)
		}
		forward := true
		if bytes.Contains(ev, keyUsage) {
			if got, choices, ok := chunkUsage(ev); ok && got != nil {
				r.usage, gotUsage = *got, true
				forward = req.IncludeUsage || choices
			}
		}
		if forward {
			if err := emit(ev, len(held) > 0 || sse.ready()); err != nil {
				return r, err
			}
			streamed += streamedTokens(ev)
		}
	}
}

// emitFunc forwards one event's data to the client; more says that the
// next event is already at hand, so that it may go out with this one.
type emitFunc func(data []byte, more bool) error

// doneEvent ends an OpenAI stream.
var doneEvent = []byte("[DONE]")

func readReason(err error) string {
	switch {
	case errors.Is(err, io.EOF):
		return "no event"
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "cut in the middle of an event"
	case errors.Is(err, errEventTooLarge):
		return err.Error()
	}
	return transportReason(err)
}
