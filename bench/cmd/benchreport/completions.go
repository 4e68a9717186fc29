package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/svcplatform/svc/bench"
)

// benchModel is the model the fake upstream serves, routed by the gateway;
// slowModel streams slowly, to hold streams open.
const (
	benchModel = "bench-model"
	slowModel  = "bench-slow"
)

// fakeUpstream is an OpenAI-compatible server on loopback answering at once
// with a fixed completion (or a three-chunk stream), so that the difference
// between calling it directly and through the gateway is the proxy's cost.
// It runs in a process of its own (benchreport serve-fake-upstream), as a
// real upstream does: in the load generator's process it would share that
// process's scheduler and make the direct reference look faster than a
// separate server can be, overstating what the gateway adds.
type fakeUpstream struct {
	cmd *exec.Cmd
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

// serveFakeUpstream is the fake upstream's process: it prints
// "listening on <addr>" and serves until ctx ends.
func serveFakeUpstream(ctx context.Context) error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if strings.Contains(string(body), `"`+slowModel+`"`) {
			// A long answer: one chunk every 100 ms until the client leaves
			// or 30 s pass, to hold streams open.
			w.Header().Set("Content-Type", "text/event-stream")
			for range 300 {
				if _, err := io.WriteString(w, "data: "+fakeChunks[0]+"\n\n"); err != nil {
					return
				}
				w.(http.Flusher).Flush()
				select {
				case <-r.Context().Done():
					return
				case <-time.After(100 * time.Millisecond):
				}
			}
			_, _ = io.WriteString(w, "data: [DONE]\n\n")
			return
		}
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
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	fmt.Printf("listening on %s\n", ln.Addr())
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// startFakeUpstream starts the fake upstream's process.
func startFakeUpstream(ctx context.Context) (*fakeUpstream, error) {
	return startServer(ctx, "fake upstream", "serve-fake-upstream")
}

// startReverseProxy starts the reference proxy's process in front of
// upstream.
func startReverseProxy(ctx context.Context, upstream string) (*fakeUpstream, error) {
	return startServer(ctx, "reverse proxy", "serve-reverse-proxy", upstream)
}

// startServer runs benchreport with args as a server process of its own,
// which prints "listening on <addr>" first. On a machine with more than two
// CPUs it is pinned to the last one, apart from the gateway and the load
// generator it serves; on two, pinning would take a whole CPU from what is
// measured, so it is not.
func startServer(ctx context.Context, what string, args ...string) (*fakeUpstream, error) {
	return startServerEnv(ctx, what, nil, args...)
}

// startServerEnv is startServer with env added to this process's
// environment.
func startServerEnv(ctx context.Context, what string, env []string, args ...string) (*fakeUpstream, error) {
	cmd := exec.CommandContext(ctx, os.Args[0], args...)
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	u := &fakeUpstream{cmd: cmd}
	if n := runtime.NumCPU(); n > 2 {
		var set unix.CPUSet
		set.Set(n - 1)
		_ = unix.SchedSetaffinity(cmd.Process.Pid, &set) // threads started later inherit it
	}
	var addr string
	if _, err := fmt.Fscanf(stdout, "listening on %s\n", &addr); err != nil {
		u.close()
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	u.url = "http://" + addr
	return u, nil
}

// serveReverseProxy is the reference proxy's process: a plain
// net/http/httputil.ReverseProxy in front of target, the floor of one proxy
// hop in Go. It keeps as many idle connections to the upstream as the
// gateway's completions plugin does, and flushes each streamed chunk at
// once.
func serveReverseProxy(ctx context.Context, target string) error {
	u, err := url.Parse(target)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	proxy := &httputil.ReverseProxy{
		Rewrite:       func(r *httputil.ProxyRequest) { r.SetURL(u) },
		Transport:     &http.Transport{MaxIdleConnsPerHost: 1024, IdleConnTimeout: 90 * time.Second},
		FlushInterval: -1,
	}
	srv := &http.Server{Handler: proxy, ReadHeaderTimeout: 5 * time.Second}
	fmt.Printf("listening on %s\n", ln.Addr())
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// close stops the fake upstream's process.
func (u *fakeUpstream) close() {
	_ = u.cmd.Process.Signal(syscall.SIGTERM)
	_ = u.cmd.Wait()
}

// completionsConfig is the gateway configuration that routes benchModel to
// the fake upstream.
func (u *fakeUpstream) completionsConfig() string {
	return fmt.Sprintf(`"plugins": {"completions": {"upstreams": [{"name": "fake", "base_url": %q, "models": [%q, %q], "timeout": "10s"}]}}`,
		u.url+"/v1", benchModel, slowModel)
}

// completionsOverhead measures what the gateway adds to a chat completion:
// the same request to the fake upstream directly, through a plain
// httputil.ReverseProxy and through /v1/chat/completions, at 1, 16 and 128
// concurrent requests, streamed and not, in the same run (each triple back
// to back).
func (r *runner) completionsOverhead(ctx context.Context) {
	if r.upstream == nil {
		return
	}
	proxy, err := startReverseProxy(ctx, r.upstream.url)
	if err != nil {
		r.notes = append(r.notes, "The reference reverse proxy could not start: "+err.Error())
	} else {
		defer proxy.close()
	}
	dur := min(r.o.dur, 5*time.Second)
	for _, stream := range []bool{false, true} {
		for _, conns := range r.o.overheadConns {
			r.completionsOverheadAt(ctx, proxy, stream, conns, dur)
		}
	}
}

// overheadTarget is issue 29's bound on what the gateway adds at conns
// concurrent completions: p50 latency added over the direct call, and CPU
// per completion in the gateway and its plugins (0: not bounded).
func overheadTarget(conns int) (addedP50, cpu float64, text string) {
	switch conns {
	case 1:
		return 100, 60, "≤ 100 µs p50 added; ≤ 60 µs CPU per completion (gateway + plugin)"
	case 16:
		return 300, 60, "≤ 300 µs p50 added; ≤ 60 µs CPU per completion (gateway + plugin)"
	}
	return 0, 0, "— (reported)"
}

func (r *runner) completionsOverheadAt(ctx context.Context, proxy *fakeUpstream, stream bool, conns int, dur time.Duration) {
	kind := "not streamed"
	body := `{"model":"` + benchModel + `","messages":[{"role":"user","content":"Benchmark question {{counter}}"}]}`
	if stream {
		kind = "streamed (3 chunks and [DONE])"
		body = `{"model":"` + benchModel + `","stream":true,"messages":[{"role":"user","content":"Benchmark question {{counter}}"}]}`
	}
	label := fmt.Sprintf("%s, %d concurrent", kind, conns)
	maxAdded, maxCPU, target := overheadTarget(conns)
	row := bench.Row{What: "Chat completion proxy overhead, " + label,
		Target: target,
		Command: fmt.Sprintf("go run ./bench/cmd/loadgen -c %d -d %s -m POST -H 'Authorization: Bearer $APP_KEY' -body '%s' <gateway>/v1/chat/completions, "+
			"then the same against the upstream and through httputil.ReverseProxy (benchreport serve-reverse-proxy <upstream>)", conns, dur, body)}
	r.step("completions proxy overhead, " + label)
	headers := []bench.Header{{Name: "Content-Type", Value: "application/json"}}
	warm := min(r.o.warmup, time.Second)
	load := func(base string, headers []bench.Header) (*bench.Result, cpuSnapshot, cpuSnapshot, error) {
		return r.runLoad(ctx, bench.Load{Method: "POST", URL: base + "/v1/chat/completions",
			Connections: conns, Duration: dur, Warmup: warm, BodyFunc: bench.Template(body), Headers: headers})
	}
	direct, _, _, err := load(r.upstream.url, headers)
	if err != nil {
		row.Verdict = "failed: " + firstLine(err.Error())
		r.add(row)
		return
	}
	via, a, b, err := load(r.gw.URL, append(headers, bench.Header{Name: "Authorization", Value: "Bearer " + r.creds.App.APIKey}))
	if err != nil {
		row.Verdict = "failed: " + firstLine(err.Error())
		r.add(row)
		return
	}
	r.details = append(r.details, "**Completions via the gateway, "+label+"** — "+strings.TrimSpace(via.String())+"\n  "+cpuLine(a, b, via.Requests))
	added50, added99 := via.Latency.P50-direct.Latency.P50, via.Latency.P99-direct.Latency.P99
	cpu := 0.0
	if via.Requests > 0 {
		cpu = float64((b.gateway - a.gateway).Nanoseconds()) / 1e3 / float64(via.Requests)
	}
	row.Ours = fmt.Sprintf("p50 %s, p99 %s through the gateway (%+.0f µs p50, %+.0f µs p99); %.0f µs CPU per completion (gateway + plugin)",
		bench.Ms(via.Latency.P50), bench.Ms(via.Latency.P99), added50, added99, cpu)
	if via.ErrorTotal > 0 {
		row.Ours += fmt.Sprintf("; %d errors", via.ErrorTotal)
	}
	row.Reference = fmt.Sprintf("the fake upstream called directly: p50 %s, p99 %s", bench.Ms(direct.Latency.P50), bench.Ms(direct.Latency.P99))
	if proxy != nil {
		r.proxyPID = proxy.cmd.Process.Pid
		plain, pa, pb, err := load(proxy.url, headers)
		r.proxyPID = 0
		if err == nil {
			proxyCPU := 0.0
			if plain.Requests > 0 {
				proxyCPU = float64((pb.proxy - pa.proxy).Nanoseconds()) / 1e3 / float64(plain.Requests)
			}
			row.Reference += fmt.Sprintf("; through httputil.ReverseProxy: p50 %s, p99 %s (%+.0f µs p50; %.0f µs CPU per completion in the proxy)",
				bench.Ms(plain.Latency.P50), bench.Ms(plain.Latency.P99), plain.Latency.P50-direct.Latency.P50, proxyCPU)
		} else {
			row.Reference += "; httputil.ReverseProxy failed: " + firstLine(err.Error())
		}
	}
	if maxAdded == 0 {
		row.Verdict = "n/a"
	} else {
		row.Verdict = bench.Verdict(true, added50 <= maxAdded && cpu <= maxCPU && via.ErrorTotal == 0)
	}
	r.add(row)
}

// streamMemory holds n slow streams open through the gateway and reports
// what each adds to the resident memory of the gateway and the completions
// plugin, against the same processes idle a moment before. It runs before
// any load: a process whose heap an earlier load grew keeps that memory
// resident and would fit the streams in it, showing almost nothing per
// stream. Stacks, buffers and heap growth of the streams all count.
func (r *runner) streamMemory(ctx context.Context, n int) {
	if r.upstream == nil {
		return
	}
	r.step(fmt.Sprintf("completions: memory of %d open streams", n))
	row := bench.Row{What: fmt.Sprintf("Chat completion streams: memory per open stream (%d streams held open)", n),
		Reference: "the same processes just before", Target: "— (reported)", Verdict: "n/a",
		Command: fmt.Sprintf("%d concurrent POST /v1/chat/completions {\"model\":%q,\"stream\":true} on freshly started processes before any other load, RSS (VmRSS) of bin/gateway and bin/plugins/completions before and 1 s after all are open", n, slowModel)}
	pids := r.pluginPIDs(ctx)
	rss := func() (int64, error) {
		total, err := bench.RSS(r.gw.PID())
		if err != nil {
			return 0, err
		}
		if pid, ok := pids["completions"]; ok {
			p, err := bench.RSS(pid)
			if err != nil {
				return 0, err
			}
			total += p
		}
		return total, nil
	}
	before, err := rss()
	if err != nil {
		row.Verdict = "failed: " + err.Error()
		r.add(row)
		return
	}
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	body := `{"model":"` + slowModel + `","stream":true,"messages":[{"role":"user","content":"hold on"}]}`
	opened := make(chan error, n)
	for range n {
		go func() {
			req, _ := http.NewRequestWithContext(sctx, http.MethodPost, r.gw.URL+"/v1/chat/completions", strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", "Bearer "+r.creds.App.APIKey)
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				opened <- err
				return
			}
			defer res.Body.Close()
			buf := make([]byte, 512)
			_, err = res.Body.Read(buf) // the first chunk: the stream is open end to end
			opened <- err
			_, _ = io.Copy(io.Discard, res.Body)
		}()
	}
	failed := 0
	for range n {
		if err := <-opened; err != nil {
			failed++
		}
	}
	time.Sleep(time.Second)
	during, err := rss()
	cancel()
	if err != nil || failed > 0 {
		row.Verdict = fmt.Sprintf("failed: %d of %d streams did not open (%v)", failed, n, err)
		r.add(row)
		return
	}
	per := float64(during-before) / float64(n)
	row.Ours = fmt.Sprintf("%.1f KiB per stream (gateway + completions plugin: %s idle, %s with %d open)",
		per/1024, bench.MB(before), bench.MB(during), n)
	r.add(row)
}
