// Package openaitest is a fake OpenAI-compatible upstream on loopback for
// tests: it answers POST /v1/chat/completions in OpenAI's wire format,
// streamed (server-sent events cut at odd places, CRLF and LF line ends,
// keep-alive comments) or not, and fails on demand: 429 with Retry-After,
// 500, a hang, a stream that breaks before its first event or in the middle
// of the answer, a stream that stalls before its first token or in the
// middle of the answer. It records
// every request it gets.
//
// A request may also say where its own stream stops, so that a test can
// abort streams at chosen points and know exactly what was sent: the field
// "x_test_hold_after":k streams k content chunks and then holds the stream
// open, sending nothing more, until the client leaves; "x_test_break_after":k
// streams k content chunks and then cuts the connection.
package openaitest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// Failure is how the upstream answers one request.
type Failure int

const (
	// Answer normally.
	Answer Failure = iota
	// RateLimit answers 429 with Retry-After: 1.
	RateLimit
	// ServerError answers 500.
	ServerError
	// Hang never answers (until the caller gives up).
	Hang
	// BreakBeforeFirstEvent answers 200 and cuts the connection before any
	// event.
	BreakBeforeFirstEvent
	// BreakMidStream streams two content chunks, then cuts the connection.
	BreakMidStream
	// StallBeforeFirstToken sends the role chunk (no text) and then nothing
	// until the caller gives up.
	StallBeforeFirstToken
	// StallMidStream sends the role chunk and two content chunks (the
	// first two words of the reply), then nothing until the caller gives
	// up.
	StallMidStream
)

// Upstream is a running fake upstream.
type Upstream struct {
	// BaseURL is its OpenAI base URL, ending in /v1.
	BaseURL string
	// Reply is the text every answer carries.
	Reply string
	// Key, when set, is the API key it requires (Bearer).
	Key string

	srv     *httptest.Server
	mu      sync.Mutex
	plan    []Failure
	always  Failure
	got     []Request
	release chan struct{}
}

// Request is one request the upstream received.
type Request struct {
	Body          map[string]any
	Authorization string
}

// New starts an upstream answering reply; it stops at the end of the test.
func New(t testing.TB, reply string) *Upstream {
	u := &Upstream{Reply: reply, release: make(chan struct{})}
	u.srv = httptest.NewServer(http.HandlerFunc(u.serve))
	u.BaseURL = u.srv.URL + "/v1"
	t.Cleanup(func() {
		close(u.release)
		u.srv.CloseClientConnections()
		u.srv.Close()
	})
	return u
}

// FailNext makes the next requests fail in the given ways, one each, in
// order; later requests are answered as set by Always.
func (u *Upstream) FailNext(f ...Failure) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.plan = append(u.plan, f...)
}

// Always makes every request not planned by FailNext fail in this way.
func (u *Upstream) Always(f Failure) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.always = f
}

// Requests returns the requests received so far.
func (u *Upstream) Requests() []Request {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]Request(nil), u.got...)
}

func (u *Upstream) next(r Request) Failure {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.got = append(u.got, r)
	if len(u.plan) > 0 {
		f := u.plan[0]
		u.plan = u.plan[1:]
		return f
	}
	return u.always
}

// Usage is the usage the upstream reports: prompt tokens are 10 per
// message, completion tokens one per word of the reply.
func (u *Upstream) Usage(messages int) (prompt, completion int) {
	return 10 * messages, len(strings.Fields(u.Reply))
}

func (u *Upstream) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
		http.NotFound(w, r)
		return
	}
	raw, _ := io.ReadAll(r.Body)
	var body map[string]any
	if err := json.Unmarshal(raw, &body); err != nil {
		writeError(w, http.StatusBadRequest, "invalid JSON")
		return
	}
	f := u.next(Request{Body: body, Authorization: r.Header.Get("Authorization")})
	if u.Key != "" && r.Header.Get("Authorization") != "Bearer "+u.Key {
		writeError(w, http.StatusUnauthorized, "Incorrect API key provided.")
		return
	}
	switch f {
	case RateLimit:
		w.Header().Set("Retry-After", "1")
		writeError(w, http.StatusTooManyRequests, "Rate limit reached.")
		return
	case ServerError:
		writeError(w, http.StatusInternalServerError, "The server had an error.")
		return
	case Hang:
		u.hold(r)
		return
	}
	model, _ := body["model"].(string)
	msgs, _ := body["messages"].([]any)
	prompt, completion := u.Usage(len(msgs))
	if stream, _ := body["stream"].(bool); stream {
		if k, ok := body["x_test_hold_after"].(float64); ok {
			u.streamUntil(w, r, model, int(k), false)
			return
		}
		if k, ok := body["x_test_break_after"].(float64); ok {
			u.streamUntil(w, r, model, int(k), true)
			return
		}
		if f == StallMidStream {
			u.streamUntil(w, r, model, 2, false)
			return
		}
		u.stream(w, r, f, model, prompt, completion, body)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"id": "chatcmpl-fake", "object": "chat.completion", "created": 1700000000, "model": model,
		"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
			"message": map[string]any{"role": "assistant", "content": u.Reply}}},
		"usage":              map[string]any{"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion},
		"system_fingerprint": "fake",
	})
}

// stream writes the answer as server-sent events, one word per chunk, and
// sends the bytes in pieces of odd sizes so that event and line boundaries
// fall anywhere.
func (u *Upstream) stream(w http.ResponseWriter, r *http.Request, f Failure, model string, prompt, completion int, body map[string]any) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	flusher := w.(http.Flusher)
	if f == BreakBeforeFirstEvent {
		flusher.Flush()
		panic(http.ErrAbortHandler) // net/http drops the connection
	}
	chunk := chunkFunc(model)
	if f == StallBeforeFirstToken {
		_, _ = io.WriteString(w, "data: "+chunk(map[string]any{"role": "assistant", "content": ""}, nil, nil)+"\n\n")
		flusher.Flush()
		u.hold(r)
		return
	}
	var events []string
	events = append(events, chunk(map[string]any{"role": "assistant", "content": ""}, nil, nil))
	for i, word := range strings.Fields(u.Reply) {
		if i > 0 {
			word = " " + word
		}
		events = append(events, chunk(map[string]any{"content": word}, nil, nil))
	}
	events = append(events, chunk(map[string]any{}, "stop", nil))
	if so, _ := body["stream_options"].(map[string]any); so["include_usage"] == true {
		events = append(events, chunk(nil, nil, map[string]any{
			"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}))
	}
	events = append(events, "[DONE]")
	var text strings.Builder
	text.WriteString(": keep-alive\n\n")
	for i, ev := range events {
		if f == BreakMidStream && i == 3 {
			u.writeOdd(w, flusher, text.String()+"data: {\"id\":\"chatcm")
			panic(http.ErrAbortHandler)
		}
		end := "\n\n"
		if i%2 == 1 {
			end = "\r\n\r\n"
		}
		text.WriteString("data: " + ev + end)
	}
	u.writeOdd(w, flusher, text.String())
}

// chunkFunc returns a function writing one chat.completion.chunk of model.
func chunkFunc(model string) func(delta map[string]any, finish any, usage any) string {
	return func(delta map[string]any, finish any, usage any) string {
		choices := []any{}
		if delta != nil {
			choices = append(choices, map[string]any{"index": 0, "delta": delta, "finish_reason": finish})
		}
		c := map[string]any{"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 1700000000,
			"model": model, "choices": choices}
		if usage != nil {
			c["usage"] = usage
		}
		b, _ := json.Marshal(c)
		return string(b)
	}
}

// hold waits until the client leaves or the upstream stops.
func (u *Upstream) hold(r *http.Request) {
	select {
	case <-r.Context().Done():
	case <-u.release:
	}
}

// streamUntil streams the role chunk and k content chunks, one word of the
// reply each (cycling through the reply), then holds the stream or cuts it.
func (u *Upstream) streamUntil(w http.ResponseWriter, r *http.Request, model string, k int, cut bool) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	flusher := w.(http.Flusher)
	chunk := chunkFunc(model)
	words := strings.Fields(u.Reply)
	_, _ = io.WriteString(w, "data: "+chunk(map[string]any{"role": "assistant", "content": ""}, nil, nil)+"\n\n")
	for i := range k {
		_, _ = io.WriteString(w, "data: "+chunk(map[string]any{"content": " " + words[i%len(words)]}, nil, nil)+"\n\n")
	}
	flusher.Flush()
	if cut {
		panic(http.ErrAbortHandler)
	}
	u.hold(r)
}

// writeOdd writes s in pieces of 1, 7, 3, 13, 2, 29 … bytes, flushing each.
func (u *Upstream) writeOdd(w io.Writer, flusher http.Flusher, s string) {
	sizes := []int{1, 7, 3, 13, 2, 29, 5, 64}
	for i := 0; len(s) > 0; i++ {
		n := min(sizes[i%len(sizes)], len(s))
		_, _ = io.WriteString(w, s[:n])
		flusher.Flush()
		s = s[n:]
	}
}

func writeError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = fmt.Fprintf(w, `{"error":{"message":%q,"type":"server_error","param":null,"code":null}}`, msg)
}
