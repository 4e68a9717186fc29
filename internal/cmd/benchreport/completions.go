package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/svcplatform/svc/internal/bench"
)

// benchModel is the model the fake upstream serves, routed by the gateway.
const benchModel = "bench-model"

// fakeUpstream is an OpenAI-compatible server on loopback answering at once
// with a fixed completion (or a three-chunk stream), so that the difference
// between calling it directly and through the gateway is the proxy's cost.
type fakeUpstream struct {
	srv *http.Server
	url string
}

const fakeCompletion = `{"id":"chatcmpl-bench","object":"chat.completion","created":1800000000,"model":"bench-model",` +
	`"choices":[{"index":0,"message":{"role":"assistant","content":"Benchmark answer."},"finish_reason":"stop"}],` +
	`"usage":{"prompt_tokens":9,"completion_tokens":3,"total_tokens":12}}`

var fakeChunks = []string{
	`{"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1800000000,"model":"bench-model","choices":[{"index":0,"delta":{"role":"assistant","content":"Benchmark "},"finish_reason":null}]}`,
	`{"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1800000000,"model":"bench-model","choices":[{"index":0,"delta":{"content":"answer."},"finish_reason":"stop"}]}`,
	`{"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1800000000,"model":"bench-model","choices":[],"usage":{"prompt_tokens":9,"completion_tokens":3,"total_tokens":12}}`,
}

func startFakeUpstream() (*fakeUpstream, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if !strings.Contains(string(body), `"stream":true`) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, fakeCompletion)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for _, c := range fakeChunks {
			_, _ = io.WriteString(w, "data: "+c+"\n\n")
			w.(http.Flusher).Flush()
		}
		_, _ = io.WriteString(w, "data: [DONE]\n\n")
	})
	u := &fakeUpstream{srv: &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}, url: "http://" + ln.Addr().String()}
	go func() { _ = u.srv.Serve(ln) }()
	return u, nil
}

// completionsConfig is the gateway configuration that routes benchModel to
// the fake upstream.
func (u *fakeUpstream) completionsConfig() string {
	return fmt.Sprintf(`"completions": {"upstreams": [{"name": "fake", "base_url": %q, "models": [%q], "timeout": "10s"}]}`,
		u.url+"/v1", benchModel)
}

// completionsOverhead measures what the gateway adds to a chat completion:
// the same request to the fake upstream directly and through
// /v1/chat/completions, one connection, streamed and not, in the same run.
func (r *runner) completionsOverhead(ctx context.Context) {
	if r.upstream == nil {
		return
	}
	for _, stream := range []bool{false, true} {
		kind := "not streamed"
		body := `{"model":"` + benchModel + `","messages":[{"role":"user","content":"Benchmark question {{counter}}"}]}`
		if stream {
			kind = "streamed (3 chunks and [DONE])"
			body = `{"model":"` + benchModel + `","stream":true,"messages":[{"role":"user","content":"Benchmark question {{counter}}"}]}`
		}
		row := bench.Row{What: "Chat completion proxy overhead, " + kind + ", 1 connection",
			Target:  "≤ 300 µs p50 added",
			Command: fmt.Sprintf("go run ./internal/cmd/loadgen -c 1 -d %s -m POST -H 'Authorization: Bearer $APP_KEY' -body '%s' <gateway>/v1/chat/completions, then the same against the upstream", r.o.dur, body)}
		r.step("completions proxy overhead, " + kind)
		headers := []bench.Header{{Name: "Content-Type", Value: "application/json"}}
		direct, _, _, err := r.runLoad(ctx, bench.Load{Method: "POST", URL: r.upstream.url + "/v1/chat/completions",
			Connections: 1, Duration: r.o.dur, Warmup: min(r.o.warmup, time.Second), BodyFunc: bench.Template(body), Headers: headers})
		if err != nil {
			row.Verdict = "failed: " + firstLine(err.Error())
			r.add(row)
			continue
		}
		via, a, b, err := r.runLoad(ctx, bench.Load{Method: "POST", URL: r.gw.URL + "/v1/chat/completions",
			Connections: 1, Duration: r.o.dur, Warmup: min(r.o.warmup, time.Second), BodyFunc: bench.Template(body),
			Headers: append(headers, bench.Header{Name: "Authorization", Value: "Bearer " + r.creds.App.APIKey})})
		if err != nil {
			row.Verdict = "failed: " + firstLine(err.Error())
			r.add(row)
			continue
		}
		r.details = append(r.details, "**Completions via the gateway, "+kind+"** — "+strings.TrimSpace(via.String())+"\n  "+cpuLine(a, b, via.Requests))
		added50, added99 := via.Latency.P50-direct.Latency.P50, via.Latency.P99-direct.Latency.P99
		row.Ours = fmt.Sprintf("p50 %s, p99 %s through the gateway (+%.0f µs p50, +%.0f µs p99)",
			bench.Ms(via.Latency.P50), bench.Ms(via.Latency.P99), added50, added99)
		if via.ErrorTotal > 0 {
			row.Ours += fmt.Sprintf("; %d errors", via.ErrorTotal)
		}
		row.Reference = fmt.Sprintf("the fake upstream called directly: p50 %s, p99 %s", bench.Ms(direct.Latency.P50), bench.Ms(direct.Latency.P99))
		row.Verdict = bench.Verdict(true, added50 <= 300 && via.ErrorTotal == 0)
		r.add(row)
	}
}
