package main

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// The plugin's share of a proxied completion, against an upstream on
// loopback answering at once: parse, route, call, read (and for a stream,
// relay every event). Profile with -cpuprofile / -memprofile.

const benchAnswer = `{"id":"chatcmpl-b","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"Benchmark answer."},"finish_reason":"stop"}],"usage":{"prompt_tokens":9,"completion_tokens":3,"total_tokens":12}}`

var benchChunks = "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"Benchmark \"},\"finish_reason\":null}]}\n\n" +
	"data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"answer.\"},\"finish_reason\":\"stop\"}]}\n\n" +
	"data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[],\"usage\":{\"prompt_tokens\":9,\"completion_tokens\":3,\"total_tokens\":12}}\n\n" +
	"data: [DONE]\n\n"

func benchRouter(b *testing.B) *router {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if wantsSSE := r.Header.Get("Accept") == "text/event-stream"; wantsSSE {
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = io.WriteString(w, benchChunks)
			return
		}
		_ = body
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, benchAnswer)
	}))
	b.Cleanup(srv.Close)
	u := &upstream{name: "u", url: srv.URL + "/v1/chat/completions", models: []string{"m"}, weight: 1,
		timeout: 10 * time.Second, ttft: 10 * time.Second, breaker: &breaker{threshold: 3, cooldown: time.Minute}}
	return newRouter([]*upstream{u}, slog.New(slog.NewTextHandler(io.Discard, nil)), newMetrics())
}

func BenchmarkPluginCompletion(b *testing.B) {
	rt := benchRouter(b)
	body := []byte(`{"model":"m","messages":[{"role":"user","content":"Benchmark question 1"}]}`)
	b.ReportAllocs()
	for b.Loop() {
		req, e := parseRequest(body)
		if e != nil {
			b.Fatal(e)
		}
		if _, _, _, _, err := rt.complete(context.Background(), req); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkPluginStream(b *testing.B) {
	rt := benchRouter(b)
	body := []byte(`{"model":"m","stream":true,"messages":[{"role":"user","content":"Benchmark question 1"}]}`)
	emit := func([]byte, bool) error { return nil }
	b.ReportAllocs()
	for b.Loop() {
		req, e := parseRequest(body)
		if e != nil {
			b.Fatal(e)
		}
		if _, err := rt.stream(context.Background(), req, emit, func(time.Duration) {}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseRequest(b *testing.B) {
	body := []byte(`{"model":"m","stream":true,"temperature":0.2,"messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"Benchmark question 1"}]}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, e := parseRequest(body); e != nil {
			b.Fatal(e)
		}
	}
}

// BenchmarkParseToolRequest parses the follow-up of a tool call with
// image, audio and file parts, response_format and the rest
// (toolConversation): what agents built on OpenAI's SDKs send.
func BenchmarkParseToolRequest(b *testing.B) {
	body := []byte(toolConversation)
	b.ReportAllocs()
	for b.Loop() {
		if _, e := parseRequest(body); e != nil {
			b.Fatal(e)
		}
	}
}
