package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"runtime"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/svcplatform/svc/bench"
	"github.com/svcplatform/svc/bench/floor"
)

// The single-process floor (bench/floor): a plain net/http server with a
// pgx pool of book's size, running book's own statements and writing the
// gateway's JSON, in a process of its own (benchreport serve-floor) whose
// CPU is measured as the gateway's is. Its rows are references: what one
// straightforward Go process reaches on this machine against the same
// database, so that the gap to pgbench splits into what net/http and pgx
// cost themselves and what the gateway, the plugin process and the lane
// between them add.

// floorTokenEnv carries the bearer token to the floor's process (kept out
// of its command line).
const floorTokenEnv = "SVC_FLOOR_TOKEN"

// serveFloor is the floor's process: benchreport serve-floor <dsn>
// [-public-url U] [-user ID] [-app ID], the token in SVC_FLOOR_TOKEN; book's
// statements are read from the repository's root (the working directory).
func serveFloor(ctx context.Context, args []string) error {
	if len(args) < 1 {
		return fmt.Errorf("usage: benchreport serve-floor <dsn> [-public-url U] [-user ID] [-app ID]")
	}
	fs := flag.NewFlagSet("serve-floor", flag.ContinueOnError)
	cfg := floor.Config{Token: os.Getenv(floorTokenEnv)}
	fs.StringVar(&cfg.PublicURL, "public-url", "", "the gateway's public URL, which starts the paging links")
	fs.StringVar(&cfg.UserID, "user", "", "a post's author (the token's user)")
	fs.StringVar(&cfg.AppID, "app", "", "a post's app (the token's app)")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if cfg.Token == "" {
		return fmt.Errorf("%s is not set", floorTokenEnv)
	}
	var err error
	if cfg.List, cfg.Create, err = floor.Queries(floor.BookQueries); err != nil {
		return err
	}
	if cfg.Send, err = floor.SendStatements(); err != nil {
		return err
	}
	if path := os.Getenv(floorProfileEnv); path != "" {
		f, err := os.Create(path)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile() // on SIGTERM too: ctx ends, Serve returns
	}
	return floor.Serve(ctx, args[0], "127.0.0.1:0", cfg, os.Stdout)
}

// floorProfileEnv names a file for the floor's CPU profile, by hand:
// SVC_FLOOR_CPUPROFILE=/tmp/floor.pprof benchreport -only read ….
const floorProfileEnv = "SVC_FLOOR_CPUPROFILE"

// startFloor starts the floor's process on the benchmark database.
func (r *runner) startFloor(ctx context.Context) (*fakeUpstream, error) {
	args := []string{"serve-floor", r.db.URL, "-public-url", r.creds.BaseURL, "-user", r.creds.Users["owner"].ID, "-app", r.creds.App.ID}
	return startServerEnv(ctx, "single-process floor", []string{floorTokenEnv + "=" + r.token}, args...)
}

// floorWhat names the floor in its rows.
const floorWhat = "single-process floor (net/http + pgx, same SQL, same JSON)"

// floorFigure is one load against the floor, with the CPU of its process
// and PostgreSQL's per request (µs).
type floorFigure struct {
	res        *bench.Result
	cpu, pgCPU float64
}

// measureFloor runs load against the floor after check has compared its
// answer with the gateway's; the floor's CPU is that of its process.
func (r *runner) measureFloor(ctx context.Context, what string, fl *fakeUpstream, load bench.Load) (*floorFigure, error) {
	r.step(fmt.Sprintf("%s, %s, %d connections", what, floorWhat, load.Connections))
	r.proxyPID = fl.cmd.Process.Pid
	res, a, b, err := r.runLoad(ctx, load)
	r.proxyPID = 0
	if err != nil {
		return nil, err
	}
	if res.Requests == 0 {
		return nil, fmt.Errorf("no request completed")
	}
	per := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 / float64(res.Requests) }
	f := &floorFigure{res: res, cpu: per(b.proxy - a.proxy), pgCPU: per(b.pg - a.pg)}
	line := fmt.Sprintf("**%s, %s** — %s\n  CPU per request: floor process %.0f µs, PostgreSQL ", what, floorWhat,
		strings.TrimSpace(res.String()), f.cpu)
	if b.pgKnown {
		line += fmt.Sprintf("%.0f µs", f.pgCPU)
	} else {
		line += "not measured (external server)"
	}
	line += fmt.Sprintf(", load generator %.0f µs, gateway+plugins (idle) %.0f µs", per(b.self-a.self), per(b.gateway-a.gateway))
	if wall := b.at.Sub(a.at).Seconds(); wall > 0 {
		line += fmt.Sprintf("; CPUs busy: %.2f of %d", (b.machine-a.machine).Seconds()/wall, runtime.NumCPU())
	}
	r.details = append(r.details, line)
	return f, nil
}

// floorRows adds the floor's row (its rate against pgbench's) and ours as
// a share of the floor. refTPS is 0 without pgbench.
func (r *runner) floorRows(what, unit, cmd string, f *floorFigure, refTPS float64, refWhat string, ours *bench.Result, oursCPU float64) {
	row := bench.Row{What: what + ", " + floorWhat,
		Ours: fmt.Sprintf("%s %s (2xx), p50 %s, p99 %s; %.0f µs CPU per request (the floor's process)",
			bench.Num(f.res.OKPerSec), unit, bench.Ms(f.res.Latency.P50), bench.Ms(f.res.Latency.P99), f.cpu),
		Target: "— (a reference: what one plain Go process reaches here)", Verdict: "n/a", Command: cmd}
	if f.res.ErrorTotal > 0 {
		row.Ours += fmt.Sprintf("; %d errors", f.res.ErrorTotal)
	}
	if refTPS > 0 {
		row.Reference = fmt.Sprintf("%s: %s tps", refWhat, bench.Num(refTPS))
		row.Ratio = bench.Pct(f.res.OKPerSec / refTPS)
	} else {
		row.Reference = "pgbench not run"
	}
	r.add(row)
	share := bench.Row{What: what + ", ours as a share of the single-process floor",
		Ours: fmt.Sprintf("%s %s (2xx), p50 %s, p99 %s; %.0f µs CPU per request (gateway + plugins)",
			bench.Num(ours.OKPerSec), unit, bench.Ms(ours.Latency.P50), bench.Ms(ours.Latency.P99), oursCPU),
		Reference: fmt.Sprintf("the floor: %s %s, %.0f µs CPU per request; ours uses %.1f× its CPU per request",
			bench.Num(f.res.OKPerSec), unit, f.cpu, oursCPU/f.cpu),
		Ratio:  bench.Pct(ours.OKPerSec / f.res.OKPerSec),
		Target: "— (how much of the gap to pgbench is ours, not net/http's and pgx's)", Verdict: "n/a", Command: cmd}
	r.add(share)
	r.raw[strings.ToLower(strings.Fields(what)[1])+"_floor"] = map[string]any{"result": f.res, "cpu_us": f.cpu, "pg_cpu_us": f.pgCPU,
		"ours_share": ours.OKPerSec / f.res.OKPerSec, "ours_cpu_us": oursCPU}
}

// floorCase is one of our paths measured again against the floor, with
// the same load.
type floorCase struct {
	what, stage, unit string // the rows' path, the floor's step, the rate's unit
	url               string // ours
	// check compares ours' answer with the floor's before any load.
	check func(ctx context.Context, ours, floor string) error
	load  func(floorURL string) bench.Load
	cmd   func(floorURL string) string
	// refTPS (0 without pgbench) and refWhat are the pgbench figure ours
	// is held against.
	refTPS  float64
	refWhat string
}

// againstFloor starts the floor, checks that it answers as the gateway
// does, measures it with the case's load and adds its two rows.
func (r *runner) againstFloor(ctx context.Context, c floorCase, ours *bench.Result, oursCPU float64) {
	fail := func(err error) {
		r.add(bench.Row{What: c.what + ", " + floorWhat, Verdict: "failed: " + firstLine(err.Error())})
	}
	fl, err := r.startFloor(ctx)
	if err != nil {
		fail(err)
		return
	}
	defer fl.close()
	floorURL := fl.url + strings.TrimPrefix(c.url, r.gw.URL)
	if err := c.check(ctx, c.url, floorURL); err != nil {
		fail(err)
		return
	}
	f, err := r.measureFloor(ctx, c.stage, fl, c.load(floorURL))
	if err != nil {
		fail(err)
		return
	}
	r.floorRows(c.what, c.unit, c.cmd(floorURL), f, c.refTPS, c.refWhat, ours, oursCPU)
}

// floorRead measures the floor's Graph read with our read's load, once its
// answer is the gateway's byte for byte.
func (r *runner) floorRead(ctx context.Context, url string, ours *bench.Result, oursCPU, refTPS float64) {
	r.againstFloor(ctx, floorCase{
		what: fmt.Sprintf("Graph read `page/<id>/posts?limit=10`, %d connections", r.o.readConns), stage: "Graph read",
		unit: "req/s", url: url,
		check: func(ctx context.Context, ours, floor string) error {
			gw, err := r.get(ctx, ours)
			if err != nil {
				return err
			}
			got, err := r.get(ctx, floor)
			if err == nil && !bytes.Equal(gw, got) {
				err = fmt.Errorf("the floor's answer is not the gateway's: %.200s … against %.200s …", got, gw)
			}
			return err
		},
		load: func(floorURL string) bench.Load {
			return bench.Load{URL: floorURL, Connections: r.o.readConns, Duration: r.o.dur, Warmup: r.o.warmup,
				Headers: []bench.Header{r.authHeader()}}
		},
		cmd: func(floorURL string) string {
			return fmt.Sprintf("%s=$TOKEN go run ./bench/cmd/benchreport serve-floor $DSN -public-url %s ; go run ./bench/cmd/loadgen -c %d -d %s -warmup %s -H 'Authorization: Bearer $TOKEN' '%s'",
				floorTokenEnv, r.creds.BaseURL, r.o.readConns, r.o.dur, r.o.warmup, floorURL)
		},
		refTPS: refTPS, refWhat: fmt.Sprintf("pgbench, same SQL, %d clients, prepared", r.o.readConns),
	}, ours, oursCPU)
}

// postsAlike is a check that ours and the floor both answer body with an
// answer of shape (named by want).
func (r *runner) postsAlike(body string, shape *regexp.Regexp, want string) func(ctx context.Context, ours, floor string) error {
	return func(ctx context.Context, ours, floor string) error {
		for _, u := range []string{ours, floor} {
			got, err := r.postOnce(ctx, u, body)
			if err != nil {
				return err
			}
			if !shape.Match(got) {
				return fmt.Errorf("%s answered %.200s, not %s", u, got, want)
			}
		}
		return nil
	}
}

// postAnswer is the gateway's answer to a post write.
var postAnswer = regexp.MustCompile(`^\{"id":"[0-9]+"\}$`)

// floorWrite measures the floor's post write with our write's load, once
// it answers as the gateway does ({"id":"<digits>"}).
func (r *runner) floorWrite(ctx context.Context, body string, warmup time.Duration, ours *bench.Result, oursCPU, refTPS float64) {
	r.againstFloor(ctx, floorCase{
		what: fmt.Sprintf("Graph post write `POST page/<id>/posts`, %d connections", r.o.writeConns), stage: "Graph post write",
		unit: "posts/s", url: r.graphURL(),
		check: r.postsAlike(`{"content":"Floor check post: ☕","audience":"everyone"}`, postAnswer, `{"id":"<digits>"}`),
		load: func(floorURL string) bench.Load {
			return bench.Load{Method: "POST", URL: floorURL, Connections: r.o.writeConns, Duration: r.o.dur,
				Warmup: warmup, BodyFunc: bench.Template(body),
				Headers: []bench.Header{r.authHeader(), {Name: "Content-Type", Value: "application/json"}}}
		},
		cmd: func(floorURL string) string {
			return fmt.Sprintf("%s=$TOKEN go run ./bench/cmd/benchreport serve-floor $DSN -user %s -app %s ; go run ./bench/cmd/loadgen -c %d -d %s -warmup %s -m POST -H 'Authorization: Bearer $TOKEN' -H 'Content-Type: application/json' -body '%s' '%s'",
				floorTokenEnv, r.creds.Users["owner"].ID, r.creds.App.ID, r.o.writeConns, r.o.dur, warmup, body, floorURL)
		},
		refTPS: refTPS, refWhat: fmt.Sprintf("pgbench single-row insert, %d clients, synchronous_commit=on", r.o.writeConns),
	}, ours, oursCPU)
}

// postOnce posts body to u with the token and returns the answer, which
// must be 200.
func (r *runner) postOnce(ctx context.Context, u, body string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+r.token)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err == nil && res.StatusCode != http.StatusOK {
		err = fmt.Errorf("%s answered %d: %s", u, res.StatusCode, firstLine(string(b)))
	}
	return b, err
}

// sendAnswer is the gateway's answer to a Page message send.
var sendAnswer = regexp.MustCompile(`^\{"recipient_id":"[0-9]+","message_id":"m_[0-9A-Za-z]+","conversation_id":"[0-9]+"\}$`)

// floorSend measures the floor's Page message send (floor.SendTx, while
// its outbox copy exists) with the spread send's load, once both answer
// a send to the first recipient alike.
func (r *runner) floorSend(ctx context.Context, what, url string, ids []string, ours *bench.Result, oursCPU, refTPS float64) {
	r.againstFloor(ctx, floorCase{
		what: what, stage: "Page message send", unit: "messages/s", url: url,
		check: r.postsAlike(fmt.Sprintf(`{"recipient_user_id":%q,"text":"Floor check reply: ☕"}`, ids[0]), sendAnswer,
			`{"recipient_id","message_id","conversation_id"}`),
		load: func(floorURL string) bench.Load {
			return bench.Load{Method: "POST", URL: floorURL, Connections: r.o.writeConns, Duration: r.o.dur,
				Warmup: min(r.o.warmup, time.Second), BodyFunc: spreadBody(ids),
				Headers: []bench.Header{r.authHeader(), {Name: "Content-Type", Value: "application/json"}}}
		},
		cmd: func(floorURL string) string {
			return fmt.Sprintf("%s=$TOKEN go run ./bench/cmd/benchreport serve-floor $DSN -app %s ; go run ./bench/cmd/loadgen -c %d -d %s -m POST (recipient_user_id rotating over the same %d users) '%s'  # events into svcbench_send.outbox, as the SQL-alone row",
				floorTokenEnv, r.creds.App.ID, r.o.writeConns, r.o.dur, len(ids), floorURL)
		},
		refTPS: refTPS, refWhat: fmt.Sprintf("pgbench single-row insert, %d clients, synchronous_commit=on", r.o.writeConns),
	}, ours, oursCPU)
}
