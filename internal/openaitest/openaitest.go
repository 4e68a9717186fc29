// Package openaitest is a fake OpenAI-compatible upstream on loopback for
// tests: it answers POST /v1/chat/completions in OpenAI's wire format,
// streamed (server-sent events cut at odd places, CRLF and LF line ends,
// keep-alive comments) or not, and fails on demand: 429 with Retry-After,
// 500, a hang, a stream that breaks before its first event or in the middle
// of the answer, a stream that stalls before its first token or in the
// middle of the answer. It records
// every request it gets.
//
// Its answers follow OpenAI's published chat API as a model would use it,
// deterministically (see generate): with tools, and tool_choice other than
// "none", it calls a tool (the named one, else the first) with arguments
// filling every property of the tool's parameters; after a tool message it
// answers in text quoting the tool's result; with a json_schema
// response_format its text is a JSON document of that schema; otherwise it
// answers Reply. It honours n, max_tokens / max_completion_tokens (cut,
// finish_reason "length"), logprobs, and stream_options.include_usage.
// Every answer and chunk also carries FutureField, a field no OpenAI client
// knows yet, so that tests can see it come back.
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
	Raw           []byte // the body as it came
	Authorization string
}

// FutureField is a top-level field of every answer and chunk that no
// client knows: a gateway must pass it on untouched.
const FutureField = "x_fake_future_field"

// futureValue is FutureField's value, as written.
const futureValue = `{"kept":[1,2.50,"three"]}`

// New starts an upstream answering reply; it stops at the end of the test.
func New(t testing.TB, reply string) *Upstream {
	u := Start(reply)
	t.Cleanup(u.Close)
	return u
}

// Start starts an upstream answering reply on a loopback port, outside a
// Go test (cmd/fake-openai-upstream serves it to the Node.js tests);
// Close stops it.
func Start(reply string) *Upstream {
	u := &Upstream{Reply: reply, release: make(chan struct{})}
	u.srv = httptest.NewServer(http.HandlerFunc(u.serve))
	u.BaseURL = u.srv.URL + "/v1"
	return u
}

// Close stops the upstream, cutting the answers still running.
func (u *Upstream) Close() {
	close(u.release)
	u.srv.CloseClientConnections()
	u.srv.Close()
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
	f := u.next(Request{Body: body, Raw: raw, Authorization: r.Header.Get("Authorization")})
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
	prompt, _ := u.Usage(len(msgs))
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
		u.stream(w, r, f, model, prompt, body)
		return
	}
	g := u.generate(body)
	n := choices(body)
	logprobs, _ := body["logprobs"].(bool)
	var cs []any
	for i := range n {
		msg := map[string]any{"role": "assistant", "content": nil, "refusal": nil}
		if g.call != nil {
			msg["tool_calls"] = []any{map[string]any{"id": g.call.id, "type": "function",
				"function": map[string]any{"name": g.call.name, "arguments": strings.Join(g.pieces, "")}}}
		} else {
			msg["content"] = strings.Join(g.pieces, "")
		}
		c := map[string]any{"index": i, "message": msg, "logprobs": nil, "finish_reason": g.finish}
		if logprobs && g.call == nil {
			c["logprobs"] = logprobsOf(g.pieces)
		}
		cs = append(cs, c)
	}
	completion := n * len(g.pieces)
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"id": "chatcmpl-fake", "object": "chat.completion", "created": 1700000000, "model": model,
		"choices":            cs,
		"usage":              map[string]any{"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion},
		"system_fingerprint": "fake", "service_tier": "default",
		FutureField: json.RawMessage(futureValue),
	})
}

// generated is what the fake model "generates" for a request: pieces of
// text (one token each), or of a tool call's arguments, and the finish
// reason.
type generated struct {
	pieces []string
	call   *struct{ id, name string }
	finish string
}

// generate answers a request as a model using OpenAI's chat API would,
// deterministically: after a tool's result, text quoting it; with tools
// (tool_choice not "none"), a call of the named or the first tool, every
// property of its parameters set to "fake"; with a json_schema
// response_format, a document of that schema; otherwise Reply. A
// max_completion_tokens or max_tokens below the answer's tokens cuts it
// (finish_reason "length").
func (u *Upstream) generate(body map[string]any) generated {
	g := generated{finish: "stop"}
	msgs, _ := body["messages"].([]any)
	var last map[string]any
	if len(msgs) > 0 {
		last, _ = msgs[len(msgs)-1].(map[string]any)
	}
	tools, _ := body["tools"].([]any)
	format, _ := body["response_format"].(map[string]any)
	text := u.Reply
	switch {
	case last["role"] == "tool":
		content, _ := last["content"].(string)
		text = fmt.Sprintf("The tool %v answered %s", last["tool_call_id"], content)
	case len(tools) > 0 && body["tool_choice"] != "none":
		tool, _ := tools[0].(map[string]any)
		if tc, ok := body["tool_choice"].(map[string]any); ok {
			want, _ := tc["function"].(map[string]any)
			for _, t := range tools {
				t, _ := t.(map[string]any)
				if f, _ := t["function"].(map[string]any); f["name"] == want["name"] {
					tool = t
				}
			}
		}
		fn, _ := tool["function"].(map[string]any)
		name, _ := fn["name"].(string)
		args, _ := json.Marshal(instance(fn["parameters"]))
		g.call = &struct{ id, name string }{"call_fake_" + name, name}
		// Arguments stream in pieces, cut inside a string as OpenAI's do.
		a := string(args)
		g.pieces, g.finish = []string{a[:len(a)/2], a[len(a)/2:]}, "tool_calls"
		return g
	case format["type"] == "json_schema":
		js, _ := format["json_schema"].(map[string]any)
		b, _ := json.Marshal(instance(js["schema"]))
		text = string(b)
	case format["type"] == "json_object":
		b, _ := json.Marshal(map[string]any{"answer": u.Reply})
		text = string(b)
	}
	for i, word := range strings.Fields(text) {
		if i > 0 {
			word = " " + word
		}
		g.pieces = append(g.pieces, word)
	}
	for _, k := range []string{"max_completion_tokens", "max_tokens"} {
		if m, ok := body[k].(float64); ok && int(m) < len(g.pieces) {
			g.pieces, g.finish = g.pieces[:int(m)], "length"
		}
	}
	return g
}

// instance is a value of a JSON schema: every property of an object, a
// string "fake", the number 1, true, an empty array.
func instance(schema any) any {
	s, _ := schema.(map[string]any)
	switch s["type"] {
	case "object":
		props, _ := s["properties"].(map[string]any)
		out := map[string]any{}
		for k, p := range props {
			out[k] = instance(p)
		}
		return out
	case "string":
		return "fake"
	case "number", "integer":
		return 1
	case "boolean":
		return true
	case "array":
		return []any{}
	}
	if schema == nil {
		return map[string]any{}
	}
	return nil
}

// choices is the request's n (default 1).
func choices(body map[string]any) int {
	if n, ok := body["n"].(float64); ok && n >= 1 {
		return int(n)
	}
	return 1
}

// logprobsOf is a choice's logprobs object for these tokens.
func logprobsOf(pieces []string) map[string]any {
	content := []any{}
	for _, p := range pieces {
		content = append(content, map[string]any{"token": p, "logprob": -0.25, "bytes": []byte(p), "top_logprobs": []any{}})
	}
	return map[string]any{"content": content, "refusal": nil}
}

// stream writes the answer as server-sent events, one token per chunk, and
// sends the bytes in pieces of odd sizes so that event and line boundaries
// fall anywhere.
func (u *Upstream) stream(w http.ResponseWriter, r *http.Request, f Failure, model string, prompt int, body map[string]any) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	flusher := w.(http.Flusher)
	if f == BreakBeforeFirstEvent {
		flusher.Flush()
		panic(http.ErrAbortHandler) // net/http drops the connection
	}
	chunk := chunkFunc(model)
	if f == StallBeforeFirstToken {
		_, _ = io.WriteString(w, "data: "+chunk(0, map[string]any{"role": "assistant", "content": ""}, nil, nil, nil)+"\n\n")
		flusher.Flush()
		u.hold(r)
		return
	}
	g := u.generate(body)
	n := choices(body)
	logprobs, _ := body["logprobs"].(bool)
	var events []string
	for i := range n {
		at := func(delta map[string]any, finish any) string { return chunk(i, delta, finish, nil, nil) }
		if g.call != nil {
			events = append(events, at(map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{
				"index": 0, "id": g.call.id, "type": "function", "function": map[string]any{"name": g.call.name, "arguments": ""}}}}, nil))
			for _, p := range g.pieces {
				events = append(events, at(map[string]any{"tool_calls": []any{map[string]any{"index": 0, "function": map[string]any{"arguments": p}}}}, nil))
			}
		} else {
			events = append(events, at(map[string]any{"role": "assistant", "content": "", "refusal": nil}, nil))
			for _, p := range g.pieces {
				if logprobs {
					events = append(events, chunk(i, map[string]any{"content": p}, nil, logprobsOf([]string{p}), nil))
					continue
				}
				events = append(events, at(map[string]any{"content": p}, nil))
			}
		}
		events = append(events, at(map[string]any{}, g.finish))
	}
	if so, _ := body["stream_options"].(map[string]any); so["include_usage"] == true {
		completion := n * len(g.pieces)
		events = append(events, chunk(0, nil, nil, nil, map[string]any{
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

// chunkFunc returns a function writing one chat.completion.chunk of
// model: choice i with its delta, finish reason and logprobs, or, for a nil
// delta, no choice and the usage.
func chunkFunc(model string) func(i int, delta map[string]any, finish, logprobs, usage any) string {
	return func(i int, delta map[string]any, finish, logprobs, usage any) string {
		choices := []any{}
		if delta != nil {
			c := map[string]any{"index": i, "delta": delta, "finish_reason": finish}
			if logprobs != nil {
				c["logprobs"] = logprobs
			}
			choices = append(choices, c)
		}
		c := map[string]any{"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 1700000000,
			"model": model, "choices": choices, "system_fingerprint": "fake", FutureField: json.RawMessage(futureValue)}
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
	_, _ = io.WriteString(w, "data: "+chunk(0, map[string]any{"role": "assistant", "content": ""}, nil, nil, nil)+"\n\n")
	for i := range k {
		_, _ = io.WriteString(w, "data: "+chunk(0, map[string]any{"content": " " + words[i%len(words)]}, nil, nil, nil)+"\n\n")
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
