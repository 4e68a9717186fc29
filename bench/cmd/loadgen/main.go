// Command loadgen is the project's HTTP load generator, for measurements on
// this machine (loopback addresses only): a fixed number of keep-alive
// HTTP/1.1 connections, each with one request in flight, sending one request
// template for a fixed time, then a report of throughput, latency
// percentiles (p50/p90/p99/p99.9/max from an HDR-style histogram) and
// answers by status. It stops by itself after -warmup + -d.
//
//	loadgen [flags] URL
//	loadgen serve [-addr 127.0.0.1:0]
//
// "{{counter}}" in the URL or the body is replaced by the request's number
// (0, 1, 2, … across all connections), so every write can be unique:
//
//	loadgen -c 8 -d 10s -m POST -H 'Authorization: Bearer …' \
//	  -H 'Content-Type: application/json' -body '{"content":"post {{counter}}"}' \
//	  'http://127.0.0.1:8080/api/v1/graph?node=page/1/posts'
//
// With -rate the load is open-loop: requests are due at a fixed total rate
// and latency counts from when each was due (no coordinated omission).
// "loadgen serve" runs the trivial plain net/http server (60-byte JSON) the
// generator is checked against; see bench/README.md.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/svcplatform/svc/bench"
)

type headerFlags []bench.Header

func (h *headerFlags) String() string { return fmt.Sprint(*h) }

func (h *headerFlags) Set(s string) error {
	name, value, ok := strings.Cut(s, ":")
	if !ok || strings.TrimSpace(name) == "" {
		return fmt.Errorf("header %q: want 'Name: value'", s)
	}
	*h = append(*h, bench.Header{Name: strings.TrimSpace(name), Value: strings.TrimSpace(value)})
	return nil
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "loadgen:", err)
		}
		os.Exit(2)
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "serve" {
		fs := flag.NewFlagSet("loadgen serve", flag.ContinueOnError)
		fs.SetOutput(stderr)
		addr := fs.String("addr", "127.0.0.1:0", "address to listen on")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		return bench.ServeTrivial(ctx, *addr, stdout)
	}

	fs := flag.NewFlagSet("loadgen", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: loadgen [flags] URL\n       loadgen serve [-addr 127.0.0.1:0]")
		fs.PrintDefaults()
	}
	conns := fs.Int("c", 64, "connections (each keeps one request in flight)")
	dur := fs.Duration("d", 10*time.Second, "measured duration")
	warmup := fs.Duration("warmup", 0, "unmeasured warmup before -d")
	rate := fs.Float64("rate", 0, "total requests per second (open loop); 0 = as fast as possible")
	requests := fs.Uint64("n", 0, "stop after this many requests (0 = no limit)")
	method := fs.String("m", "GET", "HTTP method")
	var headers headerFlags
	fs.Var(&headers, "H", "request header 'Name: value' (repeatable)")
	body := fs.String("body", "", "request body; {{counter}} is replaced by the request number")
	bodyFile := fs.String("body-file", "", "read the request body from this file")
	timeout := fs.Duration("timeout", 0, "per-request timeout (0 = the end of the run)")
	jsonOut := fs.Bool("json", false, "print the report as JSON")
	out := fs.String("o", "", "also write the JSON report to this file")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return errors.New("give exactly one URL")
	}
	l := bench.Load{Method: strings.ToUpper(*method), URL: fs.Arg(0), Headers: headers, Connections: *conns,
		Duration: *dur, Warmup: *warmup, Rate: *rate, Requests: *requests, Timeout: *timeout}
	b := *body
	if *bodyFile != "" {
		data, err := os.ReadFile(*bodyFile)
		if err != nil {
			return err
		}
		b = string(data)
	}
	if b != "" {
		l.Body = []byte(b)
		l.BodyFunc = bench.Template(b)
	}
	if f := bench.Template(l.URL); f != nil {
		target, err := requestTarget(l.URL)
		if err != nil {
			return err
		}
		l.PathFunc = bench.Template(target)
		l.URL = strings.ReplaceAll(l.URL, bench.CounterPlaceholder, "0")
	}
	// Bounded even if asked for a huge duration by mistake: a day at most,
	// and Ctrl-C stops it with a report.
	ctx, cancel := context.WithTimeout(ctx, *warmup+*dur+30*time.Second)
	defer cancel()
	res, err := bench.Run(ctx, l)
	if err != nil {
		return err
	}
	if *out != "" {
		data, _ := json.MarshalIndent(res, "", "  ")
		if err := os.WriteFile(*out, append(data, '\n'), 0o644); err != nil {
			return err
		}
	}
	if *jsonOut {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(res)
	}
	_, err = fmt.Fprint(stdout, res)
	return err
}

// requestTarget is the path and query of a URL template, kept verbatim.
func requestTarget(raw string) (string, error) {
	rest, ok := strings.CutPrefix(raw, "http://")
	if !ok {
		return "", fmt.Errorf("%s: only http:// URLs are supported", raw)
	}
	i := strings.IndexByte(rest, '/')
	if i < 0 {
		return "/", nil
	}
	return rest[i:], nil
}
