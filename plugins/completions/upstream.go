package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Breaker settings: three failures in a row take an upstream out for 30
// seconds (the upstream's cooldown setting), then a one-token generation
// probes it.
const (
	breakerThreshold = 3
	breakerCooldown  = 30 * time.Second
)

// maxUpstreamBody bounds a non-streamed upstream answer.
const maxUpstreamBody = 32 << 20

// upstream is one configured OpenAI-compatible server.
type upstream struct {
	name    string
	url     string // …/chat/completions
	key     string // never logged
	models  []string
	weight  int
	timeout time.Duration // a whole answer that is not streamed
	ttft    time.Duration // a stream's first token, and each later wait
	breaker *breaker
	// direct is where the direct client sends requests, nil when they go
	// through net/http (https, a proxy); see directClient.
	direct *directTarget
	// headers are the direct client's extra request headers, streamed or
	// not (they hold the key: never logged).
	headers, streamHeaders []byte
}

// useDirect decides whether u's requests go through the direct client and
// prepares them.
func (u *upstream) useDirect() {
	t, ok := directTargetOf(u.url)
	if !ok || strings.ContainsFunc(u.key, func(r rune) bool { return r < ' ' || r == 0x7f }) {
		return // net/http refuses such a key, saying so
	}
	u.direct = &t
	auth := ""
	if u.key != "" {
		auth = "Authorization: Bearer " + u.key + "\r\n"
	}
	u.headers = []byte("Accept: application/json\r\n" + auth)
	u.streamHeaders = []byte("Accept: text/event-stream\r\n" + auth)
}

// attemptError is a failed call to one upstream that another upstream (or
// a later try) may answer.
type attemptError struct {
	upstream    string
	reason      string // for logs, metrics and operators; never holds the key
	rateLimited bool
	retryAfter  time.Duration
}

func (e *attemptError) Error() string { return e.upstream + ": " + e.reason }

// passThrough is an upstream's refusal of the request itself (a 4xx other
// than 401, 403, 408, 409 and 429): another upstream would refuse it too,
// so it goes to the client as it came.
type passThrough struct {
	status int
	body   []byte
}

func (p *passThrough) Error() string {
	return fmt.Sprintf("upstream refused the request: %d", p.status)
}

// post sends body to the upstream. The answer is open when err is nil and
// the status is 200; any other status is read and classified here.
func (rt *router) post(ctx context.Context, u *upstream, body []byte, stream bool) (*http.Response, error) {
	res, err := rt.send(ctx, u, body, stream)
	if err != nil {
		return nil, &attemptError{upstream: u.name, reason: transportReason(err)}
	}
	if res.StatusCode == http.StatusOK {
		return res, nil
	}
	defer func() { _ = res.Body.Close() }()
	b, _ := io.ReadAll(io.LimitReader(res.Body, 64<<10))
	switch s := res.StatusCode; {
	case s == http.StatusTooManyRequests:
		return nil, &attemptError{upstream: u.name, reason: "429 Too Many Requests", rateLimited: true,
			retryAfter: retryAfter(res.Header.Get("Retry-After"), time.Now())}
	case s >= 500, s == http.StatusUnauthorized, s == http.StatusForbidden, s == http.StatusRequestTimeout, s == http.StatusConflict:
		return nil, &attemptError{upstream: u.name, reason: res.Status,
			retryAfter: retryAfter(res.Header.Get("Retry-After"), time.Now())}
	case s >= 400 && json.Valid(b):
		return nil, &passThrough{status: s, body: b}
	}
	return nil, &attemptError{upstream: u.name, reason: "unexpected answer " + res.Status}
}

// send makes the exchange, through the direct client when it serves u.
func (rt *router) send(ctx context.Context, u *upstream, body []byte, stream bool) (*http.Response, error) {
	if u.direct != nil {
		h := u.headers
		if stream {
			h = u.streamHeaders
		}
		return rt.direct.do(ctx, *u.direct, h, body)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if stream {
		req.Header.Set("Accept", "text/event-stream")
	} else {
		req.Header.Set("Accept", "application/json")
	}
	if u.key != "" {
		req.Header.Set("Authorization", "Bearer "+u.key)
	}
	return rt.client.Do(req)
}

// transportReason describes a failed exchange without the URL's query or
// anything the request carried.
func transportReason(err error) string {
	var ne net.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return "timed out"
	case errors.Is(err, context.Canceled):
		return "cancelled"
	}
	var oe *net.OpError
	if errors.As(err, &oe) {
		return "connection error: " + oe.Err.Error()
	}
	return "connection error"
}

// retryAfter reads a Retry-After header: seconds or an HTTP date. Waits
// are capped at a minute; what is unreadable means none.
func retryAfter(h string, now time.Time) time.Duration {
	if h == "" {
		return 0
	}
	var d time.Duration
	if secs, err := strconv.ParseFloat(h, 64); err == nil && secs >= 0 {
		d = time.Duration(secs * float64(time.Second))
	} else if t, err := http.ParseTime(h); err == nil {
		d = t.Sub(now)
	}
	return min(max(d, 0), time.Minute)
}
