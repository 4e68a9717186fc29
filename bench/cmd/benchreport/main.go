// Command benchreport measures the platform against its references in one
// run on this machine, side by side, and writes bench/RESULTS.md: the Graph
// read and write paths through the built gateway and book plugin against
// pgbench running the same SQL on the same database, the token exchange
// rate, start-up times, idle memory, and the load generator itself against
// wrk on a plain net/http server. The targets are those of
// shared/PERFORMANCE.md; see bench/README.md.
//
//	go build -o bin/benchreport ./bench/cmd/benchreport && bin/benchreport
//
// It needs bin/gateway and bin/plugins (make build). PostgreSQL is the
// embedded cluster with the gateway's default, durable settings, in a fresh
// folder under -work; with SVC_DATABASE_URL set, a fresh database on that
// server instead (dropped at the end). Everything runs on loopback and
// stops by itself (the whole run takes about two and a half minutes).
package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/svcplatform/svc/bench"
	"github.com/svcplatform/svc/bench/floor"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if len(os.Args) > 1 && os.Args[1] == "serve-trivial" {
		// The plain net/http reference, in a process of its own.
		if err := bench.ServeTrivial(ctx, "127.0.0.1:0", os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "benchreport serve-trivial:", err)
			os.Exit(1)
		}
		return
	}
	if len(os.Args) > 1 && os.Args[1] == "serve-fake-upstream" {
		// The fake completions upstream, in a process of its own.
		if err := serveFakeUpstream(ctx); err != nil {
			fmt.Fprintln(os.Stderr, "benchreport serve-fake-upstream:", err)
			os.Exit(1)
		}
		return
	}
	if len(os.Args) > 2 && os.Args[1] == "serve-reverse-proxy" {
		// The plain httputil.ReverseProxy reference, in a process of its own.
		if err := serveReverseProxy(ctx, os.Args[2]); err != nil {
			fmt.Fprintln(os.Stderr, "benchreport serve-reverse-proxy:", err)
			os.Exit(1)
		}
		return
	}
	if len(os.Args) > 2 && os.Args[1] == "serve-floor" {
		// The single-process floor of the Graph read and write
		// (bench/floor), in a process of its own.
		if err := serveFloor(ctx, os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, "benchreport serve-floor:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(ctx, os.Args[1:]); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "benchreport:", err)
		}
		os.Exit(1)
	}
}

type options struct {
	bin        string
	pluginsDir string
	work       string
	out        string
	jsonOut    string
	dur        time.Duration
	warmup     time.Duration
	readConns  int
	writeConns int
	posts      int
	codes      int
	rounds     int
	pgbench    string
	skipStart  bool
	skipCheck  bool
	only       string
	profile    string
	// The curves (curves.go).
	curves      bool
	curveConns  []int
	curveDur    time.Duration
	curveWarmup time.Duration
	curvesSVG   string
	// overheadConns are the concurrencies of the completions overhead
	// figures (completions.go).
	overheadConns []int
	// The webhook figures (webhooks.go).
	webhooks   bool
	hookEvents int
	hookRate   int
}

func run(ctx context.Context, args []string) error {
	var o options
	fs := flag.NewFlagSet("benchreport", flag.ContinueOnError)
	fs.StringVar(&o.bin, "bin", "bin", "folder holding gateway and plugins/ (make build)")
	fs.StringVar(&o.work, "work", ".tmp/bench", "scratch folder (emptied first)")
	fs.StringVar(&o.out, "o", "bench/RESULTS.md", "the Markdown report to write")
	fs.StringVar(&o.jsonOut, "json", "", "also write the raw results as JSON here (default <work>/results.json)")
	fs.DurationVar(&o.dur, "d", 10*time.Second, "measured duration of each throughput figure")
	fs.DurationVar(&o.warmup, "warmup", 2*time.Second, "unmeasured warmup before each throughput figure")
	fs.IntVar(&o.readConns, "read-conns", 64, "connections (and pgbench clients) for the read figure")
	fs.IntVar(&o.writeConns, "write-conns", 8, "connections (and pgbench clients) for the write figure")
	fs.IntVar(&o.rounds, "rounds", 1, "paired rounds (ours, then pgbench) of the read and write figures; the median ratio is reported")
	fs.IntVar(&o.posts, "posts", 1000, "posts seeded on the Page before the read figure")
	fs.IntVar(&o.codes, "codes", 8000, "most authorization codes to issue for the token exchange figure")
	fs.StringVar(&o.pgbench, "pgbench", "", "pgbench binary (default: on PATH or /usr/lib/postgresql/<v>/bin; \"none\" runs without the database references)")
	fs.BoolVar(&o.skipStart, "skip-startup", false, "skip the start-up timings")
	fs.BoolVar(&o.skipCheck, "skip-loadgen-check", false, "skip checking the load generator against wrk")
	fs.StringVar(&o.profile, "profile", "", "write CPU and allocation profiles of the gateway and the book, svcchat and completions plugins into this folder (make profile)")
	fs.StringVar(&o.only, "only", "", `"completions", "curves", "read" (the Graph read alone, for its per-stage CPU with -profile), "write" (the post write alone, likewise), "send" (the Page message send alone, likewise), "webhooks" (the webhook delivery rows), "token" (the token exchange) or "hop" (the plugin hop, a go test benchmark; no platform): measure only those figures (the report is partial)`)
	fs.BoolVar(&o.webhooks, "webhooks", true, "measure webhook delivery: its rate, its commit → delivery latency and the post write with a subscriber (about 40 s)")
	fs.IntVar(&o.hookEvents, "webhook-events", 10000, "events committed at once for the webhook delivery rate")
	fs.IntVar(&o.hookRate, "webhook-rate", 1000, "offered events per second for the webhook latency figure")
	fs.BoolVar(&o.curves, "curves", true, "measure the curves: the Graph reads and the post write at each of -curve-conns, beside pgbench (about 3.5 minutes)")
	conns := fs.String("curve-conns", "1,8,32,64,128", "connections of the curves' points, ascending")
	fs.DurationVar(&o.curveDur, "curve-d", 3*time.Second, "measured duration of each curve point (ours and pgbench each)")
	fs.DurationVar(&o.curveWarmup, "curve-warmup", time.Second, "unmeasured warmup before each curve point of ours")
	fs.StringVar(&o.curvesSVG, "curves-svg", "", "the curves image to write (default curves.svg beside -o)")
	overhead := fs.String("completions-conns", "1,16,128", "concurrencies of the completions overhead figures, ascending (1 and 16 have targets)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var err error
	if o.curveConns, err = parseConns("curve-conns", *conns); err != nil {
		return err
	}
	if o.overheadConns, err = parseConns("completions-conns", *overhead); err != nil {
		return err
	}
	if o.curveDur < time.Second {
		return errors.New("-curve-d must be at least 1s (pgbench counts in whole seconds)")
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if o.only != "" && !slices.Contains([]string{"completions", "curves", "read", "write", "send", "webhooks", "token", "hop"}, o.only) {
		return fmt.Errorf("-only %q: the cases that run alone are \"completions\", \"curves\", \"read\", \"write\", \"send\", \"webhooks\", \"token\" and \"hop\"", o.only)
	}
	if o.only != "" {
		o.skipStart, o.skipCheck = true, true
	}
	if o.only == "curves" {
		o.curves = true
	}
	if o.hookEvents < 1 || o.hookRate < 1 {
		return errors.New("-webhook-events and -webhook-rate must be positive")
	}
	if o.rounds < 1 || o.rounds > 9 {
		return errors.New("-rounds must be between 1 and 9")
	}
	if o.dur < time.Second {
		return errors.New("-d must be at least 1s (pgbench counts in whole seconds)")
	}
	o.pluginsDir = filepath.Join(o.bin, "plugins")
	if o.curvesSVG == "" {
		o.curvesSVG = filepath.Join(filepath.Dir(o.out), "curves.svg")
	}
	for _, p := range []*string{&o.bin, &o.pluginsDir, &o.work, &o.out, &o.profile, &o.curvesSVG} {
		if *p == "" {
			continue
		}
		abs, err := filepath.Abs(*p)
		if err != nil {
			return err
		}
		*p = abs
	}
	if o.jsonOut == "" {
		o.jsonOut = filepath.Join(o.work, "results.json")
	}
	gatewayBin := filepath.Join(o.bin, "gateway")
	if _, err := os.Stat(gatewayBin); err != nil {
		return fmt.Errorf("%s is missing: run make build first", gatewayBin)
	}
	// Bounded whatever happens: the whole run is ~2.5 minutes with defaults.
	budget := 6*time.Minute + time.Duration(4+4*o.rounds)*(o.dur+o.warmup)
	// The single-process floor's read and write (floor.go).
	budget += 2 * (o.dur + o.warmup)
	if o.webhooks || o.only == "webhooks" {
		// Two writes, the rate and its reference, the latency, and their
		// bounded waits for the deliveries.
		budget += 3 * time.Minute
	}
	if o.only == "" || o.only == "hop" {
		// The hop benchmark: its compile and 12 × 30,000 calls.
		budget += 3 * time.Minute
	}
	if o.curves {
		// Five scenarios; per point ours, pgbench, connection set-up.
		budget += time.Duration(5*len(o.curveConns)) * (2*o.curveDur + 2*o.curveWarmup + 5*time.Second)
	}
	ctx, cancel := context.WithTimeout(ctx, budget)
	defer cancel()
	if err := os.RemoveAll(o.work); err != nil {
		return err
	}
	if err := os.MkdirAll(o.work, 0o755); err != nil {
		return err
	}
	if o.profile != "" {
		if err := os.MkdirAll(o.profile, 0o755); err != nil {
			return err
		}
	}
	pgbench := o.pgbench
	switch pgbench {
	case "":
		pgbench = bench.FindPgbench()
	case "none":
		pgbench = ""
	}
	r := &runner{o: o, gatewayBin: gatewayBin, loadgenRow: -1, pgbench: pgbench, raw: map[string]any{},
		log: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})), started: time.Now()}
	r.runAll(ctx)
	return r.write()
}

type runner struct {
	o           options
	gatewayBin  string
	pgbench     string
	log         *slog.Logger
	started     time.Time
	rep         bench.Report
	raw         map[string]any
	notes       []string
	details     []string
	plainRPS    float64
	loadgenRow  int
	mem         []memSample
	busyAtStart float64
	// reads counts the measured Graph reads, for the per-stage CPU of
	// -only read -profile.
	reads uint64

	db    *bench.Database
	gw    *bench.Gateway
	creds credentials
	token string
	// upstream is the fake OpenAI-compatible server the completions case
	// routes to.
	upstream *fakeUpstream
	// proxyPID is the reference reverse proxy's (or the single-process
	// floor's) process while its load runs, for its CPU
	// (cpuSnapshot.proxy); 0 otherwise.
	proxyPID int
	oauth    *bench.OAuthClient
	// curves are the measured curves (curves.go).
	curves []*curve
}

// credentials is <data-dir>/dev-credentials.json (gateway/internal/seed).
type credentials struct {
	BaseURL string `json:"base_url"`
	Users   map[string]struct {
		ID       string `json:"id"`
		Username string `json:"username"`
		Password string `json:"password"`
	} `json:"users"`
	Page struct {
		ID string `json:"id"`
	} `json:"page"`
	App struct {
		ID           string `json:"id"`
		ClientID     string `json:"client_id"`
		ClientSecret string `json:"client_secret"`
		RedirectURI  string `json:"redirect_uri"`
		APIKey       string `json:"api_key"`
	} `json:"app"`
	AdminToken string `json:"admin_token"`
}

func (r *runner) step(name string) {
	fmt.Fprintf(os.Stderr, "benchreport [%5.1fs] %s\n", time.Since(r.started).Seconds(), name)
}

func (r *runner) add(row bench.Row) { r.rep.Rows = append(r.rep.Rows, row) }

func (r *runner) runAll(ctx context.Context) {
	r.environment()
	if r.o.only == "hop" {
		r.step("plugin hop (go test -bench)")
		r.pluginHop(ctx)
		return
	}
	if !r.o.skipCheck {
		r.step("load generator against plain net/http (and wrk)")
		r.loadgenCheck(ctx)
	}
	if err := r.startPlatform(ctx); err != nil {
		r.step("platform failed: " + err.Error())
		r.notes = append(r.notes, "The platform could not be measured: "+err.Error())
		for _, what := range []string{"Graph read", "Graph post write", "Token exchange"} {
			r.add(bench.Row{What: what, Verdict: "blocked: " + firstLine(err.Error())})
		}
	} else {
		r.measurePlatform(ctx)
	}
	r.stopPlatform()
	if r.o.profile != "" {
		r.stageBreakdown()
	}
	if !r.o.skipStart {
		r.step("start-up times (embedded database)")
		r.startup(ctx)
	}
	r.memoryRows()
	if r.o.only == "" {
		r.step("plugin hop (go test -bench)")
		r.pluginHop(ctx)
	}
}

func (r *runner) environment() {
	env := [][2]string{
		{"date", time.Now().UTC().Format("2006-01-02 15:04 UTC")},
		{"CPU", fmt.Sprintf("%s, %d logical CPUs (GOMAXPROCS %d)", cpuModel(), runtime.NumCPU(), runtime.GOMAXPROCS(0))},
		{"memory", memTotal()},
		{"kernel", strings.TrimSpace(readFile("/proc/sys/kernel/osrelease"))},
		{"Go", runtime.Version()},
		{"commit", gitDescribe()},
		{"command", strings.TrimSpace("benchreport " + strings.Join(os.Args[1:], " "))},
	}
	if load := strings.Fields(readFile("/proc/loadavg")); len(load) >= 3 {
		env = append(env, [2]string{"load average at start", strings.Join(load[:3], " ")})
		fmt.Sscan(load[0], &r.busyAtStart)
	}
	r.rep.Env = env
}

// ---- the load generator ------------------------------------------------

func (r *runner) loadgenCheck(ctx context.Context) {
	cmd := exec.CommandContext(ctx, os.Args[0], "serve-trivial")
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	what := "Load generator: plain net/http, 60-byte JSON, 64 connections (best of 2 alternating runs each)"
	if err := cmd.Start(); err != nil {
		r.add(bench.Row{What: what, Verdict: "failed: " + err.Error()})
		return
	}
	defer func() { _ = cmd.Process.Signal(syscall.SIGTERM); _ = cmd.Wait() }()
	var addr string
	if _, err := fmt.Fscanf(stdout, "listening on %s\n", &addr); err != nil {
		r.add(bench.Row{What: what, Verdict: "failed: trivial server: " + err.Error()})
		return
	}
	url := "http://" + addr + "/"
	dur := min(r.o.dur, 3*time.Second)
	secs := max(1, int(dur.Seconds()))
	wrk, wrkErr := exec.LookPath("wrk")
	var best *bench.Result
	var bestCPU, wrkCPU time.Duration
	var wrkRPS float64
	var wrkOut string
	for range 2 { // alternate, so that both see the same machine
		cpu0 := bench.CPUTime()
		res, err := bench.Run(ctx, bench.Load{URL: url, Connections: 64, Duration: dur, Warmup: time.Second})
		cpu := bench.CPUTime() - cpu0
		if err != nil {
			r.add(bench.Row{What: what, Verdict: "failed: " + err.Error()})
			return
		}
		if best == nil || res.RPS > best.RPS {
			best, bestCPU = res, cpu
		}
		if wrkErr != nil {
			continue
		}
		wcmd := exec.CommandContext(ctx, wrk, "-t2", "-c64", fmt.Sprintf("-d%ds", secs), url)
		out, err := wcmd.CombinedOutput()
		if rps := parseWrk(string(out)); err == nil && rps > wrkRPS {
			wrkRPS = rps
			wrkCPU = wcmd.ProcessState.UserTime() + wcmd.ProcessState.SystemTime()
		}
		wrkOut = string(out)
	}
	r.raw["loadgen_plain"] = best
	// The CPU counted includes the warmup's requests; a close enough estimate.
	perReq := float64(bestCPU.Microseconds()) / (best.RPS * (best.Seconds + 1))
	ours := fmt.Sprintf("%s req/s, p50 %s, p99 %s; %.1f µs CPU/request", bench.Num(best.RPS),
		bench.Ms(best.Latency.P50), bench.Ms(best.Latency.P99), perReq)
	lgCmd := fmt.Sprintf("go run ./bench/cmd/loadgen -c 64 -d %s -warmup 1s %s  # server: go run ./bench/cmd/loadgen serve", dur, url)
	row := bench.Row{What: what, Ours: ours, Target: "≥ 90 % of wrk (the generator is not the bottleneck)", Command: lgCmd}
	r.plainRPS = best.RPS
	switch {
	case wrkErr != nil:
		row.Reference, row.Verdict = "wrk is not installed (apt-get install wrk)", "n/a"
	case wrkRPS == 0:
		row.Reference, row.Verdict = "wrk failed: "+firstLine(wrkOut), "n/a"
	default:
		r.raw["wrk_plain_rps"] = wrkRPS
		ratio := best.RPS / wrkRPS
		row.Reference = fmt.Sprintf("wrk -t2 -c64: %s req/s; %.1f µs CPU/request", bench.Num(wrkRPS),
			float64(wrkCPU.Microseconds())/(wrkRPS*float64(secs)))
		row.Ratio = bench.Pct(ratio)
		row.Command += fmt.Sprintf(" ; wrk -t2 -c64 -d%ds %s", secs, url)
	}
	// The verdict waits for the Graph read: see loadgenVerdict.
	row.Target = "not the bottleneck: ≥ 10× the Graph read rate, and ≤ 10 % of the CPUs during it"
	row.Verdict = "n/a: no Graph read"
	r.loadgenRow = len(r.rep.Rows)
	r.add(row)
}

// loadgenVerdict judges the load generator by the Graph read it drove: its
// capacity against the trivial server and its share of the CPUs.
func (r *runner) loadgenVerdict(graphRPS, cpuShare float64) {
	if r.loadgenRow < 0 || r.plainRPS == 0 || graphRPS == 0 {
		return
	}
	row := &r.rep.Rows[r.loadgenRow]
	row.Ours += fmt.Sprintf("; during the Graph read it used %s of the CPUs", bench.Pct(cpuShare))
	row.Verdict = bench.Verdict(true, r.plainRPS >= 10*graphRPS && cpuShare <= 0.10)
}

func parseWrk(out string) float64 {
	for _, line := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "Requests/sec:"); ok {
			var f float64
			fmt.Sscan(strings.TrimSpace(v), &f)
			return f
		}
	}
	return 0
}

// ---- the platform ------------------------------------------------------

func (r *runner) startPlatform(ctx context.Context) error {
	r.step("PostgreSQL")
	external := os.Getenv("SVC_DATABASE_URL")
	db, err := bench.OpenDatabase(ctx, filepath.Join(r.o.work, "pg"), external, r.log)
	if err != nil {
		return fmt.Errorf("PostgreSQL: %w", err)
	}
	r.db = db
	if db.Embedded {
		r.rep.Env = append(r.rep.Env, [2]string{"PostgreSQL", "embedded cluster (internal/pgembed, default durable settings), database " + db.Name})
	} else {
		r.rep.Env = append(r.rep.Env, [2]string{"PostgreSQL", "server of SVC_DATABASE_URL, fresh database " + db.Name + " (dropped afterwards)"})
	}
	if s, err := db.Settings(ctx); err == nil {
		r.raw["postgres_settings"] = s
		r.rep.Env = append(r.rep.Env, [2]string{"PostgreSQL settings", fmt.Sprintf(
			"version %s, synchronous_commit=%s, fsync=%s, full_page_writes=%s, wal_sync_method=%s, shared_buffers=%s, max_connections=%s",
			s["server_version"], s["synchronous_commit"], s["fsync"], s["full_page_writes"], s["wal_sync_method"],
			s["shared_buffers"], s["max_connections"])})
	}
	if r.pgbench == "" {
		r.rep.Env = append(r.rep.Env, [2]string{"pgbench", "NOT FOUND (install the postgresql package): the database references are missing"})
	} else {
		r.rep.Env = append(r.rep.Env, [2]string{"pgbench", r.pgbench})
	}

	r.step("gateway")
	// The Graph rate limits (per app, user and Page per minute) would refuse
	// a benchmark's calls within seconds: raise them far away. The limiter
	// still counts every call, so its cost stays in the figures.
	cfgPath := filepath.Join(r.o.work, "gateway.json")
	cfg := `{"rate_limits": {"app": 1000000000, "user": 1000000000, "page": 1000000000}`
	if up, err := startFakeUpstream(ctx); err == nil {
		r.upstream = up
		cfg += ", " + up.completionsConfig()
	} else {
		r.notes = append(r.notes, "The fake completions upstream could not start: "+err.Error())
	}
	if err := os.WriteFile(cfgPath, []byte(cfg+"}\n"), 0o644); err != nil {
		return err
	}
	dataDir := filepath.Join(r.o.work, "gateway")
	startCtx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	gw, err := bench.StartGateway(startCtx, bench.GatewayOptions{Bin: r.gatewayBin, PluginsDir: r.o.pluginsDir,
		DataDir: dataDir, DatabaseURL: db.URL, Args: []string{"--config", cfgPath}, Env: profileEnv(r.o.profile)})
	if err != nil {
		return err
	}
	r.gw = gw
	if _, err := gw.WaitHealthy(startCtx); err != nil {
		return err
	}
	b, err := os.ReadFile(filepath.Join(dataDir, "dev-credentials.json"))
	if err != nil {
		return fmt.Errorf("read the development credentials: %w", err)
	}
	if err := json.Unmarshal(b, &r.creds); err != nil {
		return fmt.Errorf("dev-credentials.json: %w", err)
	}
	owner, ok := r.creds.Users["owner"]
	if !ok || r.creds.Page.ID == "" || r.creds.App.ClientID == "" {
		return errors.New("dev-credentials.json lacks the owner, the Page or the app")
	}

	r.step("user access token (OAuth code flow as the owner)")
	if r.oauth, err = bench.NewOAuthClient(gw.URL, r.creds.App.ClientID, r.creds.App.ClientSecret, r.creds.App.RedirectURI); err != nil {
		return err
	}
	code, err := r.oauth.SignInAndConsent(ctx, owner.Username, owner.Password, tokenScopes)
	if err != nil {
		return err
	}
	tok, err := r.oauth.Exchange(ctx, code)
	if err != nil {
		return err
	}
	r.token = tok.AccessToken
	return nil
}

// profileEnv asks the gateway and the plugins on the measured paths for
// their CPU profile of the whole run and their allocation profile at exit,
// in dir (none when dir is empty).
func profileEnv(dir string) []string {
	if dir == "" {
		return nil
	}
	env := []string{"SVC_CPUPROFILE=" + filepath.Join(dir, "gateway.cpu.pprof"),
		"SVC_MEMPROFILE=" + filepath.Join(dir, "gateway.allocs.pprof")}
	for _, p := range []string{"book", "svcchat", "completions"} {
		prefix := "SVC_" + strings.ToUpper(p) + "_"
		env = append(env, prefix+"CPUPROFILE="+filepath.Join(dir, p+".cpu.pprof"),
			prefix+"MEMPROFILE="+filepath.Join(dir, p+".allocs.pprof"))
	}
	return env
}

var tokenScopes = []string{"pages:read", "pages:manage", "svcchat:send"}

func (r *runner) stopPlatform() {
	if r.gw != nil {
		if err := r.gw.Stop(); err != nil {
			r.notes = append(r.notes, err.Error())
		}
	}
	if r.db != nil {
		r.db.Close()
	}
	if r.upstream != nil {
		r.upstream.close()
	}
}

func (r *runner) graphURL() string {
	return r.gw.URL + "/api/v1/graph?node=page/" + r.creds.Page.ID + "/posts"
}

// startSettle is how long after a start the memory is first sampled: the
// gateway and each plugin hand start-up's transient memory back 3 s after
// it (internal/memtrim), which an operator's idle platform has done;
// sampled earlier, "idle" would be start-up's peak.
const startSettle = 5 * time.Second

func (r *runner) measurePlatform(ctx context.Context) {
	if r.o.only == "completions" {
		time.Sleep(startSettle)
		r.streamMemory(ctx, 200) // first: on processes no load has grown yet
		r.completionsOverhead(ctx)
		time.Sleep(2 * time.Second)
		r.memory(ctx, "2 s after the load", true)
		return
	}
	if r.o.only == "read" {
		r.step(fmt.Sprintf("seeding %d posts through the Graph", r.o.posts))
		if err := r.seed(ctx); err != nil {
			r.add(bench.Row{What: "Graph read", Verdict: "blocked: seeding posts: " + firstLine(err.Error())})
			return
		}
		r.graphRead(ctx)
		time.Sleep(2 * time.Second)
		r.memory(ctx, "2 s after the load", true)
		return
	}
	if r.o.only == "write" {
		r.graphWrite(ctx)
		time.Sleep(2 * time.Second)
		r.memory(ctx, "2 s after the load", true)
		return
	}
	if r.o.only == "send" {
		r.messageSend(ctx)
		time.Sleep(2 * time.Second)
		r.memory(ctx, "2 s after the load", true)
		return
	}
	if r.o.only == "webhooks" {
		r.webhooks(ctx)
		time.Sleep(2 * time.Second)
		r.memory(ctx, "2 s after the load", true)
		return
	}
	if r.o.only == "token" {
		r.step("token exchange")
		r.tokenExchange(ctx)
		time.Sleep(2 * time.Second)
		r.memory(ctx, "2 s after the load", true)
		return
	}
	if r.o.only == "curves" {
		r.step(fmt.Sprintf("seeding %d posts through the Graph", r.o.posts))
		if err := r.seed(ctx); err != nil {
			r.notes = append(r.notes, "The curves are missing: seeding posts failed: "+err.Error())
			return
		}
		r.measureCurves(ctx)
		time.Sleep(2 * time.Second)
		r.memory(ctx, fmt.Sprintf("2 s after the curves (up to %d connections)", r.o.curveConns[len(r.o.curveConns)-1]), true)
		return
	}
	time.Sleep(startSettle)
	r.step("idle memory")
	r.memory(ctx, fmt.Sprintf("%s after the first start (seeded)", startSettle), false)
	r.streamMemory(ctx, 200) // on processes no load has grown yet

	r.step(fmt.Sprintf("seeding %d posts through the Graph", r.o.posts))
	if err := r.seed(ctx); err != nil {
		r.add(bench.Row{What: "Graph read", Verdict: "blocked: seeding posts: " + firstLine(err.Error())})
	} else {
		r.graphRead(ctx)
	}
	r.graphWrite(ctx)
	r.messageSend(ctx)
	r.completionsOverhead(ctx)
	if r.o.webhooks {
		r.webhooks(ctx)
	}
	r.step("token exchange")
	r.tokenExchange(ctx)
	time.Sleep(2 * time.Second)
	r.memory(ctx, "2 s after the load", true)
	if r.o.curves {
		r.measureCurves(ctx)
		time.Sleep(2 * time.Second)
		r.memory(ctx, fmt.Sprintf("2 s after the curves (up to %d connections)", r.o.curveConns[len(r.o.curveConns)-1]), true)
	}
}

func (r *runner) authHeader() bench.Header {
	return bench.Header{Name: "Authorization", Value: "Bearer " + r.token}
}

func (r *runner) seed(ctx context.Context) error {
	body := bench.Template(`{"content":"Seed post {{counter}}: coffee ☕ café 咖啡","audience":"everyone"}`)
	res, err := bench.Run(ctx, bench.Load{Method: "POST", URL: r.graphURL(), Connections: 8,
		Headers:  []bench.Header{r.authHeader(), {Name: "Content-Type", Value: "application/json"}},
		BodyFunc: body, Requests: uint64(r.o.posts), Duration: 2 * time.Minute})
	if err != nil {
		return err
	}
	if res.Status["200"] != uint64(r.o.posts) {
		return fmt.Errorf("%d of %d seed posts answered 200: %s", res.Status["200"], r.o.posts, strings.TrimSpace(res.String()))
	}
	return nil
}

// cpuSnapshot is the CPU used so far by each side.
type cpuSnapshot struct {
	at                         time.Time
	self, gateway, pg, machine time.Duration
	pgKnown                    bool // the server is our embedded cluster
	// proxy is the reference reverse proxy's CPU, while one is measured
	// (runner.proxyPID).
	proxy time.Duration
}

func (r *runner) cpu() cpuSnapshot {
	s := cpuSnapshot{at: time.Now(), self: bench.CPUTime(), machine: bench.MachineBusy()}
	if r.gw != nil {
		s.gateway = bench.TreeCPUTime(r.gw.PID())
	}
	if r.db != nil && r.db.PostmasterPID != 0 {
		s.pg, s.pgKnown = bench.TreeCPUTime(r.db.PostmasterPID), true
	}
	if r.proxyPID != 0 {
		s.proxy = bench.TreeCPUTime(r.proxyPID)
	}
	return s
}

// gatewayCPU is the gateway's and its plugins' CPU per request, in µs,
// between two snapshots.
func gatewayCPU(a, b cpuSnapshot, requests uint64) float64 {
	if requests == 0 {
		return 0
	}
	return float64((b.gateway - a.gateway).Nanoseconds()) / 1e3 / float64(requests)
}

// cpuLine describes CPU per request between two snapshots.
func cpuLine(a, b cpuSnapshot, requests uint64) string {
	return cpuLineClient(a, b, requests, b.self-a.self, "load generator")
}

// cpuLineClient is cpuLine with the client's CPU given (pgbench's own).
func cpuLineClient(a, b cpuSnapshot, requests uint64, client time.Duration, clientName string) string {
	if requests == 0 {
		return ""
	}
	per := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 / float64(requests) }
	wall := b.at.Sub(a.at).Seconds()
	total := client + (b.gateway - a.gateway) + (b.pg - a.pg)
	pg := "not measured (external server)"
	if b.pgKnown {
		pg = fmt.Sprintf("%.0f µs", per(b.pg-a.pg))
	}
	s := fmt.Sprintf("CPU per request: gateway+plugins %.0f µs, PostgreSQL %s, %s %.0f µs",
		per(b.gateway-a.gateway), pg, clientName, per(client))
	if wall > 0 {
		machine := (b.machine - a.machine).Seconds() / wall
		others := max(0, machine-total.Seconds()/wall)
		s += fmt.Sprintf("; CPUs busy: %.2f of %d, of which %.2f not charged to the measured processes (other work on the machine, interrupts)", machine, runtime.NumCPU(), others)
	}
	return s
}

func (r *runner) graphRead(ctx context.Context) {
	what := fmt.Sprintf("Graph read `page/<id>/posts?limit=10`, %d connections", r.o.readConns)
	url := r.graphURL() + "&limit=10"
	// One call first: the answer must be a page of 10 posts.
	if err := r.checkRead(ctx, url); err != nil {
		r.add(bench.Row{What: what, Verdict: "blocked: " + firstLine(err.Error())})
		return
	}
	row := bench.Row{What: what, Target: "≥ 35 % of pgbench; p99 < 10 ms; ≤ 50 µs CPU per read (gateway + plugins)",
		Command: fmt.Sprintf("go run ./bench/cmd/loadgen -c %d -d %s -warmup %s -H 'Authorization: Bearer $TOKEN' '%s'",
			r.o.readConns, r.o.dur, r.o.warmup, url)}
	var rounds []round
	for i := range r.o.rounds {
		r.step(fmt.Sprintf("Graph read, %d connections, %s + %s warmup%s", r.o.readConns, r.o.dur, r.o.warmup, r.roundLabel(i)))
		load := bench.Load{URL: url, Connections: r.o.readConns, Duration: r.o.dur, Warmup: r.o.warmup,
			Headers: []bench.Header{r.authHeader()}}
		res, snapA, snapB, err := r.runLoad(ctx, load)
		if err != nil {
			row.Verdict = "failed: " + firstLine(err.Error())
			r.add(row)
			return
		}
		r.reads += res.Requests
		r.details = append(r.details, "**Graph read**"+r.roundLabel(i)+" — "+strings.TrimSpace(res.String())+"\n  "+cpuLine(snapA, snapB, res.Requests))
		r.step(fmt.Sprintf("pgbench, same SQL, %d clients%s", r.o.readConns, r.roundLabel(i)))
		ref, refLine := r.pgbenchRead(ctx, i == 0)
		share := 0.0
		if wall := snapB.at.Sub(snapA.at).Seconds(); wall > 0 {
			share = (snapB.self - snapA.self).Seconds() / wall / float64(runtime.NumCPU())
		}
		rounds = append(rounds, round{ours: res, ref: ref, refLine: refLine, clientShare: share, cpu: gatewayCPU(snapA, snapB, res.Requests)})
	}
	m, ratios := median(rounds)
	res, ref := m.ours, m.ref
	r.raw["graph_read"] = res
	r.loadgenVerdict(res.RPS, m.clientShare)
	row.Ours = fmt.Sprintf("%s req/s (2xx), p50 %s, p99 %s; %.0f µs CPU per read (gateway + plugins)",
		bench.Num(res.OKPerSec), bench.Ms(res.Latency.P50), bench.Ms(res.Latency.P99), m.cpu)
	if res.ErrorTotal > 0 {
		row.Ours += fmt.Sprintf("; %d errors", res.ErrorTotal)
	}
	p99ok := res.Latency.P99 < 10000 && m.cpu <= 50
	if ref == nil {
		row.Reference = m.refLine
		row.Verdict = bench.Verdict(true, p99ok) + " (p99 and CPU only)"
		r.add(row)
		r.floorRead(ctx, url, res, m.cpu, 0)
		return
	}
	ratio := res.OKPerSec / ref.TPS
	row.Reference = fmt.Sprintf("pgbench, same SQL, %d clients, prepared: %s tps (latency avg %.2f ms)", r.o.readConns, bench.Num(ref.TPS), ref.LatencyAvgMs)
	row.Ratio = bench.Pct(ratio) + ratios
	row.Verdict = bench.Verdict(true, ratio >= 0.35 && p99ok && res.ErrorTotal == 0)
	row.Command += " ; " + ref.Command
	r.add(row)
	r.floorRead(ctx, url, res, m.cpu, ref.TPS)
	if r.plainRPS > 0 {
		r.details = append(r.details, fmt.Sprintf("Graph read throughput is %s of the plain net/http figure measured above (%s req/s).",
			bench.Pct(res.OKPerSec/r.plainRPS), bench.Num(r.plainRPS)))
	}
	r.graphReadByWrk(ctx, url, res)
}

// graphReadByWrk runs the Graph read's load again from wrk, a client that
// is not ours, so that the figure and its tail do not rest on our load
// generator alone. Skipped when wrk is not installed (make bench installs
// it), and under -profile, whose CPU per read counts our reads only.
func (r *runner) graphReadByWrk(ctx context.Context, url string, ours *bench.Result) {
	wrk, err := exec.LookPath("wrk")
	if err != nil || r.o.profile != "" {
		return
	}
	what := fmt.Sprintf("Graph read `page/<id>/posts?limit=10`, the same load from wrk (an outside client), %d connections", r.o.readConns)
	secs := max(1, int(r.o.dur.Seconds()))
	cmd := fmt.Sprintf("wrk -t2 -c%d -d%ds --latency -H 'Authorization: Bearer $TOKEN' '%s'", r.o.readConns, secs, url)
	row := bench.Row{What: what, Target: "— (a check of our load generator's figure and tail)", Verdict: "n/a", Command: cmd,
		Reference: fmt.Sprintf("our load generator, just before: %s req/s, p50 %s, p99 %s",
			bench.Num(ours.OKPerSec), bench.Ms(ours.Latency.P50), bench.Ms(ours.Latency.P99))}
	r.step(fmt.Sprintf("Graph read from wrk, %d connections", r.o.readConns))
	h := r.authHeader()
	out, err := exec.CommandContext(ctx, wrk, "-t2", fmt.Sprintf("-c%d", r.o.readConns), fmt.Sprintf("-d%ds", secs),
		"--latency", "-H", h.Name+": "+h.Value, url).CombinedOutput()
	w := parseWrkReport(string(out))
	switch {
	case err != nil || w.rps == 0:
		row.Ours = "wrk failed: " + firstLine(string(out))
	default:
		row.Ours = fmt.Sprintf("%s req/s, p50 %s, p99 %s", bench.Num(w.rps), bench.Ms(w.p50), bench.Ms(w.p99))
		if w.non2xx > 0 {
			row.Ours += fmt.Sprintf("; %d answers not 2xx", w.non2xx)
		}
		row.Ratio = bench.Pct(w.rps / ours.OKPerSec)
	}
	r.add(row)
}

// wrkReport is what benchreport reads of wrk's output: latencies in µs.
type wrkReport struct {
	rps      float64
	p50, p99 float64
	non2xx   int
}

// parseWrkReport reads wrk's requests per second, its --latency
// distribution's 50 % and 99 % lines and its count of answers that were not
// 2xx or 3xx.
func parseWrkReport(out string) wrkReport {
	w := wrkReport{rps: parseWrk(out)}
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) == 2 && (f[0] == "50%" || f[0] == "99%"):
			us, ok := wrkDuration(f[1])
			if !ok {
				continue
			}
			if f[0] == "50%" {
				w.p50 = us
			} else {
				w.p99 = us
			}
		case strings.HasPrefix(strings.TrimSpace(line), "Non-2xx or 3xx responses:"):
			fmt.Sscan(f[len(f)-1], &w.non2xx)
		}
	}
	return w
}

// wrkDuration reads one of wrk's durations ("635.91us", "1.23ms", "2.00s")
// in µs.
func wrkDuration(s string) (float64, bool) {
	for _, u := range []struct {
		suffix string
		us     float64
	}{{"us", 1}, {"ms", 1e3}, {"s", 1e6}, {"m", 60e6}} {
		if v, ok := strings.CutSuffix(s, u.suffix); ok {
			f, err := strconv.ParseFloat(v, 64)
			return f * u.us, err == nil
		}
	}
	return 0, false
}

// round is one paired measurement: ours, then the reference.
type round struct {
	ours    *bench.Result
	ref     *bench.PgbenchResult
	refLine string
	// clientShare is the load generator's share of the machine's CPUs.
	clientShare float64
	// cpu is the gateway's and its plugins' CPU per request, µs.
	cpu float64
}

// median returns the round with the median ratio (the last round when a
// reference is missing) and, with several rounds, the list of ratios.
func median(rounds []round) (round, string) {
	for _, rd := range rounds {
		if rd.ref == nil || rd.ref.TPS == 0 {
			return rounds[len(rounds)-1], ""
		}
	}
	ratio := func(rd round) float64 { return rd.ours.OKPerSec / rd.ref.TPS }
	sorted := append([]round(nil), rounds...)
	sort.Slice(sorted, func(i, j int) bool { return ratio(sorted[i]) < ratio(sorted[j]) })
	if len(rounds) == 1 {
		return sorted[0], ""
	}
	parts := make([]string, len(rounds))
	for i, rd := range rounds {
		parts[i] = bench.Pct(ratio(rd))
	}
	return sorted[len(sorted)/2], " (median of " + strings.Join(parts, ", ") + ")"
}

func (r *runner) roundLabel(i int) string {
	if r.o.rounds <= 1 {
		return ""
	}
	return fmt.Sprintf(" (round %d of %d)", i+1, r.o.rounds)
}

func (r *runner) checkRead(ctx context.Context, url string) error {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	req.Header.Set("Authorization", "Bearer "+r.token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("the Graph read answered %d: %s", res.StatusCode, firstLine(string(body)))
	}
	var doc struct {
		Data []json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(body, &doc); err != nil || len(doc.Data) != 10 {
		return fmt.Errorf("the Graph read answered no page of 10 posts: %s", firstLine(string(body)))
	}
	r.raw["graph_read_response_bytes"] = len(body)
	return nil
}

// runLoad runs a load with CPU snapshots around it (after the warmup).
func (r *runner) runLoad(ctx context.Context, l bench.Load) (*bench.Result, cpuSnapshot, cpuSnapshot, error) {
	var a cpuSnapshot
	t := time.AfterFunc(l.Warmup, func() { a = r.cpu() })
	res, err := bench.Run(ctx, l)
	t.Stop()
	b := r.cpu()
	if a.at.IsZero() {
		a = b
	}
	return res, a, b, err
}

const postColumns = "id, page_id, author_user_id, app_id, content, audience, created_at"

func (r *runner) pgbenchRun(ctx context.Context, name, script string, clients int, defines [][2]string, options string, warmup bool) (*bench.PgbenchResult, string) {
	if r.pgbench == "" {
		return nil, "pgbench not found: install the postgresql package (/usr/lib/postgresql/<v>/bin/pgbench)"
	}
	p := bench.Pgbench{Bin: r.pgbench, URL: bench.LibpqURL(r.db.URL), Script: script,
		ScriptPath: filepath.Join(r.o.work, name+".sql"), Clients: clients, Threads: min(2, clients),
		Seconds: int(r.o.warmup.Seconds()), Defines: defines, Options: options}
	if warmup && p.Seconds >= 1 { // not counted (a failure shows in the run that counts)
		_, _ = p.Run(ctx)
	}
	p.Seconds = int(r.o.dur.Seconds())
	a := r.cpu()
	res, err := p.Run(ctx)
	b := r.cpu()
	if err != nil {
		r.notes = append(r.notes, fmt.Sprintf("pgbench %s failed: %v", name, err))
		return nil, "pgbench failed: " + firstLine(err.Error()) + " (output in the notes)"
	}
	r.raw["pgbench_"+name] = res
	line := fmt.Sprintf("**pgbench %s** — %s tps, latency avg %.2f ms, %d transactions, %d failed\n  %s",
		name, bench.Num(res.TPS), res.LatencyAvgMs, res.Processed, res.Failed,
		cpuLineClient(a, b, uint64(res.Processed), res.CPU, "pgbench"))
	r.details = append(r.details, line)
	return res, ""
}

func (r *runner) pgbenchRead(ctx context.Context, warmup bool) (*bench.PgbenchResult, string) {
	r.step(fmt.Sprintf("pgbench, same SQL, %d clients", r.o.readConns))
	// The book plugin's ListPostsFirst (plugins/book/sql/queries/posts.sql) with the
	// same parameters: -D variables are sent as parameters under -M prepared.
	script := "SELECT " + postColumns + " FROM book.posts WHERE page_id = :page_id\nORDER BY id DESC LIMIT :lim;\n"
	return r.pgbenchRun(ctx, "read", script, r.o.readConns, [][2]string{{"page_id", r.creds.Page.ID}, {"lim", "11"}}, "", warmup)
}

// benchSchema copies book.posts and core.outbox for the write references:
// the same columns, defaults (the id sequences included), constraints and
// indexes, taken from the tables themselves so that a migration changes the
// reference too. svcbench.outbox adds the per-row NOTIFY trigger core.outbox
// had before migration 0013; svcbench.outbox_quiet is the outbox as it is.
// Both enter their events in a queue as core.outbox does (outboxQueue).
var benchSchema = `
DROP SCHEMA IF EXISTS svcbench CASCADE;
CREATE SCHEMA svcbench;
CREATE TABLE svcbench.posts (LIKE book.posts INCLUDING ALL);
CREATE TABLE svcbench.outbox (LIKE core.outbox INCLUDING ALL);
CREATE TABLE svcbench.outbox_quiet (LIKE core.outbox INCLUDING ALL);
CREATE FUNCTION svcbench.outbox_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('svcbench_outbox', NEW.seq::text);
    RETURN NEW;
END;
$$;
CREATE TRIGGER outbox_notify AFTER INSERT ON svcbench.outbox
    FOR EACH ROW EXECUTE FUNCTION svcbench.outbox_notify();
` + outboxQueue("svcbench.outbox") + outboxQueue("svcbench.outbox_quiet")

// outboxQueue gives a LIKE copy of core.outbox (table, schema-qualified)
// what migration 0267 gave the real one: a trigger entering each event
// appended undispatched into a copy of core.outbox_pending, so a reference
// transaction writes what the platform's does.
func outboxQueue(table string) string {
	fn := table + "_enqueue"
	return fmt.Sprintf(`
CREATE TABLE %[1]s_pending (LIKE core.outbox_pending INCLUDING ALL);
CREATE FUNCTION %[2]s() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO %[1]s_pending (seq, ordering_key) VALUES (NEW.seq, NEW.ordering_key);
    RETURN NULL;
END;
$$;
CREATE TRIGGER outbox_enqueue AFTER INSERT ON %[1]s
    FOR EACH ROW WHEN (NEW.dispatched_at IS NULL) EXECUTE FUNCTION %[2]s();
`, table, fn)
}

func (r *runner) graphWrite(ctx context.Context) {
	what := fmt.Sprintf("Graph post write `POST page/<id>/posts`, %d connections", r.o.writeConns)
	body := `{"content":"Benchmark post {{counter}}: ☕ 咖啡 🚀","audience":"everyone"}`
	warmup := min(r.o.warmup, time.Second)
	row := bench.Row{What: what,
		Target: "≥ 40 % of pgbench single-row insert; ≤ 100 µs CPU per write (gateway + plugins)",
		Command: fmt.Sprintf("go run ./bench/cmd/loadgen -c %d -d %s -warmup %s -m POST -H 'Authorization: Bearer $TOKEN' -H 'Content-Type: application/json' -body '%s' '%s'",
			r.o.writeConns, r.o.dur, warmup, body, r.graphURL())}
	if r.pgbench != "" {
		if err := r.db.Exec(ctx, benchSchema); err != nil {
			r.notes = append(r.notes, "Creating the reference tables failed: "+err.Error())
			r.pgbench = ""
		}
	}
	defines := [][2]string{{"page_id", r.creds.Page.ID}, {"user_id", r.creds.Users["owner"].ID}, {"app_id", r.creds.App.ID}}
	insert := "INSERT INTO svcbench.posts (page_id, author_user_id, app_id, content, audience)\n" +
		"VALUES (:page_id, :user_id, :app_id, 'pgbench post: ☕ 咖啡 🚀', 'everyone')\nRETURNING " + postColumns + ";\n"
	var rounds []round
	for i := range r.o.rounds {
		r.step(fmt.Sprintf("Graph post write, %d connections%s", r.o.writeConns, r.roundLabel(i)))
		load := bench.Load{Method: "POST", URL: r.graphURL(), Connections: r.o.writeConns, Duration: r.o.dur,
			Warmup: warmup, BodyFunc: bench.Template(body),
			Headers: []bench.Header{r.authHeader(), {Name: "Content-Type", Value: "application/json"}}}
		res, a, b, err := r.runLoad(ctx, load)
		if err != nil {
			row.Verdict = "failed: " + firstLine(err.Error())
			r.add(row)
			return
		}
		r.details = append(r.details, "**Graph post write**"+r.roundLabel(i)+" — "+strings.TrimSpace(res.String())+"\n  "+cpuLine(a, b, res.Requests))
		r.step(fmt.Sprintf("pgbench single-row insert, %d clients, synchronous_commit=on%s", r.o.writeConns, r.roundLabel(i)))
		ref, refLine := r.pgbenchRun(ctx, "insert", insert, r.o.writeConns, defines, "-c synchronous_commit=on", i == 0)
		rounds = append(rounds, round{ours: res, ref: ref, refLine: refLine, cpu: gatewayCPU(a, b, res.Requests)})
	}
	m, ratios := median(rounds)
	res, ref := m.ours, m.ref
	r.raw["graph_write"] = res
	r.raw["pgbench_insert"] = ref
	row.Ours = fmt.Sprintf("%s posts/s, p50 %s, p99 %s; %.0f µs CPU per write (gateway + plugins)",
		bench.Num(res.OKPerSec), bench.Ms(res.Latency.P50), bench.Ms(res.Latency.P99), m.cpu)
	if res.ErrorTotal > 0 {
		row.Ours += fmt.Sprintf("; %d errors", res.ErrorTotal)
	}
	if ref == nil {
		row.Reference, row.Verdict = m.refLine, "n/a"
		r.add(row)
		r.floorWrite(ctx, body, warmup, res, m.cpu, 0)
		return
	}
	ratio := res.OKPerSec / ref.TPS
	row.Reference = fmt.Sprintf("pgbench single-row insert into an equivalent table, %d clients, synchronous_commit=on: %s tps",
		r.o.writeConns, bench.Num(ref.TPS))
	row.Ratio = bench.Pct(ratio) + ratios
	row.Verdict = bench.Verdict(true, ratio >= 0.4 && m.cpu <= 100 && res.ErrorTotal == 0)
	row.Command += " ; " + ref.Command
	r.add(row)
	r.floorWrite(ctx, body, warmup, res, m.cpu, ref.TPS)

	// What the post costs in SQL alone: the plugin's whole transaction, with
	// the outbox's notify trigger and without it (pg_notify serialises
	// commits on a global lock, which defeats group commit).
	for _, v := range []struct{ name, table, what string }{
		{"post_tx", "outbox", "with a per-row NOTIFY trigger on the outbox, as core.outbox had before migration 0013"},
		{"post_tx_no_notify", "outbox_quiet", "the same without the notify trigger"},
	} {
		r.step("pgbench post + outbox event transaction, " + v.what)
		tx := "\\set r random(1, 1000000000000)\nBEGIN;\n" + insert +
			"INSERT INTO svcbench." + v.table + " (id, type, page_id, app_id, data)\n" +
			"VALUES ('evt_pgbench_' || :client_id::text || '_' || :r::text, 'book.post.created', :page_id, NULL,\n" +
			"        '{\"postId\":\"1000000001\",\"pageId\":\"1\",\"content\":\"pgbench post\",\"audience\":\"everyone\"}');\nCOMMIT;\n"
		txRef, txLine := r.pgbenchRun(ctx, v.name, tx, r.o.writeConns, defines, "-c synchronous_commit=on", true)
		txRow := bench.Row{What: fmt.Sprintf("Graph post write vs its transaction in SQL alone (BEGIN; insert post; insert outbox event; COMMIT), %s, %d clients", v.what, r.o.writeConns),
			Ours: fmt.Sprintf("%s posts/s", bench.Num(res.OKPerSec)), Target: "— (how much of the gap is the transaction itself)", Verdict: "n/a"}
		if txRef == nil {
			txRow.Reference = txLine
		} else {
			txRow.Reference = fmt.Sprintf("pgbench: %s tps (%s of the single-row insert)", bench.Num(txRef.TPS), bench.Pct(txRef.TPS/ref.TPS))
			txRow.Ratio = bench.Pct(res.OKPerSec / txRef.TPS)
			txRow.Command = txRef.Command
		}
		r.add(txRow)
	}
	_ = r.db.Exec(ctx, "DROP SCHEMA IF EXISTS svcbench CASCADE")
}

// messageSend measures the Page message send (message + conversation update
// + outbox events, one transaction) against pgbench's single-row insert at
// the same concurrency: the target of shared/PERFORMANCE.md. The consumer first
// writes to the Page, which opens the 24-hour window; the owner's token then
// sends session messages through the linked app.
func (r *runner) messageSend(ctx context.Context) {
	what := fmt.Sprintf("Page message send `POST page/<id>/messages` (session message) into one conversation, %d connections", r.o.writeConns)
	consumer, ok := r.creds.Users["consumer"]
	url := r.gw.URL + "/api/v1/graph?node=page/" + r.creds.Page.ID + "/messages"
	body := `{"recipient_user_id":"` + consumer.ID + `","text":"Benchmark reply {{counter}}: ☕ 咖啡 🚀"}`
	row := bench.Row{What: what, Target: "— (every send goes into one conversation, whose row lock orders them; the target is the next row's)",
		Command: fmt.Sprintf("go run ./bench/cmd/loadgen -c %d -d %s -m POST -H 'Authorization: Bearer $TOKEN' -H 'Content-Type: application/json' -body '%s' '%s'",
			r.o.writeConns, r.o.dur, body, url)}
	if !ok {
		row.Verdict = "blocked: no consumer in the development credentials"
		r.add(row)
		return
	}
	r.step("Page message send: the consumer writes to the Page")
	if err := r.openWindow(ctx, consumer.Username, consumer.Password); err != nil {
		row.Verdict = "blocked: " + firstLine(err.Error())
		r.add(row)
		return
	}
	r.step(fmt.Sprintf("Page message send, %d connections", r.o.writeConns))
	load := bench.Load{Method: "POST", URL: url, Connections: r.o.writeConns, Duration: r.o.dur,
		Warmup: min(r.o.warmup, time.Second), BodyFunc: bench.Template(body),
		Headers: []bench.Header{r.authHeader(), {Name: "Content-Type", Value: "application/json"}}}
	res, a, b, err := r.runLoad(ctx, load)
	if err != nil {
		row.Verdict = "failed: " + firstLine(err.Error())
		r.add(row)
		return
	}
	r.details = append(r.details, "**Page message send** — "+strings.TrimSpace(res.String())+"\n  "+cpuLine(a, b, res.Requests))
	row.Ours = fmt.Sprintf("%s messages/s, p50 %s, p99 %s", bench.Num(res.OKPerSec), bench.Ms(res.Latency.P50), bench.Ms(res.Latency.P99))
	if res.ErrorTotal > 0 {
		row.Ours += fmt.Sprintf("; %d errors", res.ErrorTotal)
	}
	ref, ok := r.raw["pgbench_insert"].(*bench.PgbenchResult)
	if !ok || ref == nil {
		row.Reference, row.Verdict = "pgbench single-row insert not measured in this run", "n/a"
		r.add(row)
		r.messageSendSpread(ctx, url, nil)
		return
	}
	ratio := res.OKPerSec / ref.TPS
	row.Reference = fmt.Sprintf("pgbench single-row insert (the post-write row above), %d clients, synchronous_commit=on: %s tps", r.o.writeConns, bench.Num(ref.TPS))
	row.Ratio = bench.Pct(ratio)
	row.Target = "— (every send goes into one conversation, whose row lock orders them; the target is the next row's)"
	row.Verdict = "n/a"
	r.add(row)
	r.messageSendSpread(ctx, url, ref)
}

// spreadRecipients is how many conversations the spread message-send run
// uses, so that the eight connections rarely meet on one conversation.
const spreadRecipients = 64

// messageSendSpread is the message send over many conversations: the
// benchmark adds recipients (users with a session, straight in the core
// tables, as a seed would), each writes to the Page once, and the load
// sends to them in turn.
func (r *runner) messageSendSpread(ctx context.Context, url string, ref *bench.PgbenchResult) {
	what := fmt.Sprintf("Page message send over %d conversations, %d connections", spreadRecipients, r.o.writeConns)
	row := bench.Row{What: what, Target: "≥ 25 % of pgbench single-row insert, same clients; ≤ 150 µs CPU per send (gateway + plugins)",
		Command: fmt.Sprintf("go run ./bench/cmd/loadgen -c %d -d %s -m POST (recipient_user_id rotating over %d users who wrote to the Page) '%s'",
			r.o.writeConns, r.o.dur, spreadRecipients, url)}
	r.step(fmt.Sprintf("Page message send: %d recipients write to the Page", spreadRecipients))
	ids, err := r.addRecipients(ctx, spreadRecipients)
	if err != nil {
		row.Verdict = "blocked: " + firstLine(err.Error())
		r.add(row)
		return
	}
	r.step(fmt.Sprintf("Page message send over %d conversations, %d connections", spreadRecipients, r.o.writeConns))
	load := bench.Load{Method: "POST", URL: url, Connections: r.o.writeConns, Duration: r.o.dur,
		Warmup:   min(r.o.warmup, time.Second),
		BodyFunc: spreadBody(ids),
		Headers:  []bench.Header{r.authHeader(), {Name: "Content-Type", Value: "application/json"}}}
	res, a, b, err := r.runLoad(ctx, load)
	if err != nil {
		row.Verdict = "failed: " + firstLine(err.Error())
		r.add(row)
		return
	}
	r.details = append(r.details, "**Page message send, spread** — "+strings.TrimSpace(res.String())+"\n  "+cpuLine(a, b, res.Requests))
	cpu := gatewayCPU(a, b, res.Requests)
	row.Ours = fmt.Sprintf("%s messages/s, p50 %s, p99 %s; %.0f µs CPU per send (gateway + plugins)",
		bench.Num(res.OKPerSec), bench.Ms(res.Latency.P50), bench.Ms(res.Latency.P99), cpu)
	if res.ErrorTotal > 0 {
		row.Ours += fmt.Sprintf("; %d errors", res.ErrorTotal)
	}
	if ref == nil {
		row.Reference, row.Verdict = "pgbench single-row insert not measured in this run", "n/a"
		r.add(row)
		r.sendInSQL(ctx, what, url, ids, res, cpu, nil)
		return
	}
	ratio := res.OKPerSec / ref.TPS
	row.Reference = fmt.Sprintf("pgbench single-row insert, %d clients, synchronous_commit=on: %s tps", r.o.writeConns, bench.Num(ref.TPS))
	row.Ratio = bench.Pct(ratio)
	row.Verdict = bench.Verdict(true, ratio >= 0.25 && cpu <= 150 && res.ErrorTotal == 0)
	r.add(row)
	r.sendInSQL(ctx, what, url, ids, res, cpu, ref)
}

// sendInSQL is the spread send's transaction in SQL alone, as svcchat runs
// an app's next send to a user (plugins/svcchat, pipetx.RunOne): in one
// pipelined round trip BEGIN, the locks of the conversation and of the
// opt-in record, the message, the conversation's counters and the two
// outbox events in one statement, and COMMIT (the guard on the rows'
// versions is left out: it only reads what the locks hold). It runs on svcchat's own tables
// for the same recipients; the events go to a copy of core.outbox (same
// columns and indexes), where the webhook dispatcher does not see them.
// What this reaches is what the send could reach with a gateway and a
// plugin that cost nothing. The single-process floor's send (floorSend),
// the same transaction from one plain Go process, follows while the copy
// exists.
func (r *runner) sendInSQL(ctx context.Context, what, url string, ids []string, ours *bench.Result, oursCPU float64, insert *bench.PgbenchResult) {
	row := bench.Row{What: fmt.Sprintf("Page message send vs its transaction in SQL alone (one pipelined round trip, as an app's next send to a user goes: BEGIN, lock conversation, lock opt-in, message + counters + two outbox events, COMMIT), %d clients over the same %d conversations", r.o.writeConns, len(ids)),
		Ours: fmt.Sprintf("%s messages/s", bench.Num(ours.OKPerSec)), Target: "— (how much of the gap is the transaction itself)", Verdict: "n/a"}
	first, last, err := idRange(ids)
	if err != nil {
		row.Reference = "not measured: " + err.Error()
		r.add(row)
		return
	}
	script, err := sendScript(first, last)
	if err != nil {
		row.Reference = "not measured: " + err.Error()
		r.add(row)
		return
	}
	if err := r.db.Exec(ctx, floor.SendSchema); err != nil {
		row.Reference = "not measured: creating the outbox copy failed: " + firstLine(err.Error())
		r.add(row)
		return
	}
	defer func() { _ = r.db.Exec(ctx, floor.DropSendSchema) }()
	r.step("pgbench Page message send transaction, pipelined as svcchat sends it")
	defines := [][2]string{{"page_id", r.creds.Page.ID}, {"app_id", r.creds.App.ID}}
	txRef, txLine := r.pgbenchRun(ctx, "send_tx", script, r.o.writeConns, defines, "-c synchronous_commit=on", true)
	if txRef == nil {
		row.Reference = txLine
		r.add(row)
		return
	}
	row.Reference = fmt.Sprintf("pgbench: %s tps", bench.Num(txRef.TPS))
	if insert != nil {
		row.Reference += fmt.Sprintf(" (%s of the single-row insert)", bench.Pct(txRef.TPS/insert.TPS))
	}
	row.Ratio = bench.Pct(ours.OKPerSec / txRef.TPS)
	row.Command = txRef.Command
	r.add(row)
	var insertTPS float64
	if insert != nil {
		insertTPS = insert.TPS
	}
	r.floorSend(ctx, what, url, ids, ours, oursCPU, insertTPS)
}

// spreadBody is the spread send's n-th body: a reply to the recipients in
// turn.
func spreadBody(ids []string) func(n uint64, dst []byte) []byte {
	return func(n uint64, dst []byte) []byte {
		return fmt.Appendf(dst, `{"recipient_user_id":%q,"text":"Benchmark reply %d"}`, ids[n%uint64(len(ids))], n)
	}
}

// idRange is the first and last of ids, which must be consecutive numbers
// (the recipients are inserted in one statement, numbered by a sequence).
func idRange(ids []string) (first, last int64, err error) {
	for i, s := range ids {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("recipient id %q is not a number", s)
		}
		if i == 0 {
			first = n
		} else if n != last+1 {
			return 0, 0, fmt.Errorf("recipient ids are not consecutive (%d after %d)", n, last)
		}
		last = n
	}
	if len(ids) == 0 {
		return 0, 0, errors.New("no recipients")
	}
	return first, last, nil
}

// sendScript is svcchat's send transaction for pgbench (floor.SendTx in
// one pipeline, as the floor sends it), the recipient drawn from first to
// last, with ids unique per client and draw.
func sendScript(first, last int64) (string, error) {
	args := map[string]string{"page_id": ":page_id", "user_id": ":uid::text", "app_id": ":app_id",
		"message_id": "'m_pgbench_' || :client_id::text || '_' || :r::text",
		"event_id":   "'evt_pgbench_' || :client_id::text || '_' || :r::text",
		"text":       "'pgbench reply: ☕ 咖啡 🚀'"}
	var b strings.Builder
	fmt.Fprintf(&b, "\\set uid random(%d, %d)\n\\set r random(1, 1000000000000)\n\\startpipeline\nBEGIN;\n", first, last)
	for _, q := range floor.SendTx {
		bound, err := bench.BindNamed(q, args)
		if err != nil {
			return "", err
		}
		b.WriteString(bound)
		b.WriteString(";\n")
	}
	b.WriteString("COMMIT;\n\\endpipeline\n")
	return b.String(), nil
}

// addRecipients creates n users with a mobile session each and has each
// write to the seeded Page, which opens their conversations' windows.
func (r *runner) addRecipients(ctx context.Context, n int) ([]string, error) {
	conn, err := pgx.Connect(ctx, r.db.URL)
	if err != nil {
		return nil, err
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `INSERT INTO core.users (username, name, password_hash)
SELECT 'bench_recipient_' || g, 'Bench recipient ' || g, '!' FROM generate_series(1, $1) g RETURNING id`, n)
	if err != nil {
		return nil, fmt.Errorf("add recipients: %w", err)
	}
	userIDs, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return nil, fmt.Errorf("add recipients: %w", err)
	}
	ids := make([]string, len(userIDs))
	for i, uid := range userIDs {
		token := "svc_session_bench_" + strconv.FormatInt(uid, 10) + "_" + strconv.FormatInt(time.Now().UnixNano(), 36)
		sum := sha256.Sum256([]byte(token))
		if _, err := conn.Exec(ctx, `INSERT INTO core.credentials (token_hash, kind, user_id, expires_at)
VALUES ($1, 4, $2, now() + interval '1 hour')`, sum[:], uid); err != nil {
			return nil, fmt.Errorf("session of a recipient: %w", err)
		}
		if err := r.writeToPage(ctx, token); err != nil {
			return nil, err
		}
		ids[i] = strconv.FormatInt(uid, 10)
	}
	return ids, nil
}

// openWindow signs the user in on the mobile API and writes to the seeded
// Page once, as the chat app does.
func (r *runner) openWindow(ctx context.Context, username, password string) error {
	post := func(url, token string, body any) (*http.Response, error) {
		b, _ := json.Marshal(body)
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(b))
		if err != nil {
			return nil, err
		}
		req.Header.Set("Content-Type", "application/json")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		return http.DefaultClient.Do(req)
	}
	res, err := post(r.gw.URL+"/api/mobile/auth/session", "", map[string]string{"username": username, "password": password})
	if err != nil {
		return err
	}
	var s struct{ SessionToken string }
	err = json.NewDecoder(res.Body).Decode(&s)
	res.Body.Close()
	if err != nil || res.StatusCode != 200 {
		return fmt.Errorf("consumer sign-in: %d %v", res.StatusCode, err)
	}
	return r.writeToPage(ctx, s.SessionToken)
}

// writeToPage writes to the seeded Page as the user of session, as the chat
// app does.
func (r *runner) writeToPage(ctx context.Context, session string) error {
	b, _ := json.Marshal(map[string]string{"pageId": r.creds.Page.ID, "text": "Hello from the benchmark"})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.gw.URL+"/api/mobile/svcchat/page-messaging/messages", bytes.NewReader(b))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+session)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	res.Body.Close()
	if res.StatusCode != 200 {
		return fmt.Errorf("a user writes to the Page: HTTP %d", res.StatusCode)
	}
	return nil
}

func (r *runner) tokenExchange(ctx context.Context) {
	what := "Token exchange (`authorization_code` + PKCE S256, client secret in Basic auth), 8 connections"
	row := bench.Row{What: what, Reference: "— (absolute target)", Target: "≥ 6,000 /s",
		Command: "go run ./bench/cmd/benchreport (codes are issued first with prompt=none; the exchanges alone are timed) ; in-process: go test -run '^$' -bench TokenExchange -benchtime 5000x ./gateway/internal/oauth/"}
	// A checkpoint first, so that none is under way during the exchanges.
	// In make bench the rows before write about 540 MB of WAL, which calls
	// for a checkpoint (max_wal_size 1 GB) spread over 4.5 minutes: at
	// 442a40a it started about a minute before this figure and ran through
	// it (the run's server log: 20:58:36 to 21:03:06), and
	// its writes, fsyncs and full-page images were measured as the
	// exchanges' (5,027/s against 6,101/s with -only token, which never
	// had one). A 1.5 s figure should not depend on where that falls.
	if r.db != nil {
		if err := r.db.Exec(ctx, "CHECKPOINT"); err != nil {
			r.notes = append(r.notes, "CHECKPOINT before the token exchange failed (a checkpoint may have run during it): "+firstLine(err.Error()))
		}
	}
	// Codes first (each is one authorize request on the signed-in session),
	// then only the exchanges are timed, as in BenchmarkTokenExchange.
	codes, err := r.oauth.Codes(ctx, r.o.codes, 8, tokenScopes, time.Now().Add(min(r.o.dur, 8*time.Second)))
	if len(codes) < 100 {
		row.Verdict = fmt.Sprintf("failed: %d codes issued: %v", len(codes), err)
		r.add(row)
		return
	}
	load := bench.Load{Method: "POST", URL: r.gw.URL + "/api/oauth/token", Connections: 8, Requests: uint64(len(codes)),
		Duration: time.Minute, BodyFunc: func(n uint64, dst []byte) []byte { return append(dst, r.oauth.ExchangeForm(codes[n])...) },
		Headers: []bench.Header{{Name: "Content-Type", Value: "application/x-www-form-urlencoded"},
			{Name: "Authorization", Value: r.oauth.BasicAuth()}}}
	// A backend reports its WAL counts at most once a second: the pauses
	// let the codes' issuance report before, and the exchanges' after.
	time.Sleep(walStatsDelay)
	w0 := r.walStats(ctx)
	res, a, b, err := r.runLoad(ctx, load)
	time.Sleep(walStatsDelay)
	w1 := r.walStats(ctx)
	if err != nil {
		row.Verdict = "failed: " + firstLine(err.Error())
		r.add(row)
		return
	}
	r.raw["token_exchange"] = res
	row.Ours = fmt.Sprintf("%s exchanges/s (%d codes), p50 %s, p99 %s", bench.Num(res.OKPerSec), len(codes),
		bench.Ms(res.Latency.P50), bench.Ms(res.Latency.P99))
	if res.ErrorTotal > 0 {
		row.Ours += fmt.Sprintf("; %d errors", res.ErrorTotal)
	}
	row.Verdict = bench.Verdict(true, res.OKPerSec >= 6000 && res.ErrorTotal == 0)
	r.add(row)
	r.details = append(r.details, "**Token exchange** — "+strings.TrimSpace(res.String())+"\n  "+cpuLine(a, b, res.Requests)+w1.per(w0, res.Requests))
}

// walStatsDelay is longer than PostgreSQL's PGSTAT_MIN_INTERVAL (1 s),
// the longest a backend holds its WAL counts before reporting them.
const walStatsDelay = 1100 * time.Millisecond

// walStats is PostgreSQL's WAL and checkpoint counters at one moment; bytes
// is the WAL position.
type walStats struct {
	ok                             bool
	records, fpi, bytes, syncs     float64
	checkpoints, buffersCheckpoint float64
}

func (r *runner) walStats(ctx context.Context) walStats {
	var w walStats
	if r.db == nil {
		return w
	}
	conn, err := pgx.Connect(ctx, r.db.URL)
	if err != nil {
		return w
	}
	defer conn.Close(ctx)
	err = conn.QueryRow(ctx, `SELECT w.wal_records::float8, w.wal_fpi::float8, (pg_current_wal_lsn() - '0/0')::float8, w.wal_sync::float8,
  (b.checkpoints_timed + b.checkpoints_req)::float8, b.buffers_checkpoint::float8
FROM pg_stat_wal w, pg_stat_bgwriter b`).Scan(&w.records, &w.fpi, &w.bytes, &w.syncs, &w.checkpoints, &w.buffersCheckpoint)
	w.ok = err == nil
	return w
}

// per is the WAL written per request between a and w, as a details line.
func (w walStats) per(a walStats, n uint64) string {
	if !w.ok || !a.ok || n == 0 {
		return ""
	}
	f := float64(n)
	return fmt.Sprintf("\n  WAL per request: %.1f records, %.2f full-page images, %.0f bytes, %.2f flushes; checkpoints meanwhile %.0f (%.0f buffers written)",
		(w.records-a.records)/f, (w.fpi-a.fpi)/f, (w.bytes-a.bytes)/f, (w.syncs-a.syncs)/f, w.checkpoints-a.checkpoints, w.buffersCheckpoint-a.buffersCheckpoint)
}

// ---- memory ------------------------------------------------------------

// memSample is the RSS of the gateway and its plugins at one moment.
type memSample struct {
	label string
	// loaded: taken after a load (the after-load bound applies), not idle.
	loaded  bool
	gateway int64
	plugins map[string]int64 // name → RSS
	// files is the file-backed part of each RSS (the binary's mapped
	// code and read-only data), by name; "" is the gateway.
	files map[string]int64
}

// memory samples the platform's RSS (plugin pids from the admin API).
func (r *runner) memory(ctx context.Context, label string, loaded bool) {
	if r.gw == nil {
		return
	}
	r.sampleMemory(label, loaded, r.gw.PID(), r.pluginPIDs(ctx))
}

func (r *runner) sampleMemory(label string, loaded bool, gatewayPID int, plugins map[string]int) {
	m := memSample{label: label, loaded: loaded, plugins: map[string]int64{}, files: map[string]int64{}}
	var err error
	if m.gateway, err = bench.RSS(gatewayPID); err != nil {
		r.notes = append(r.notes, "RSS of the gateway: "+err.Error())
		return
	}
	if f, err := bench.RSSFile(gatewayPID); err == nil {
		m.files[""] = f
	}
	for name, pid := range plugins {
		if rss, err := bench.RSS(pid); err == nil {
			m.plugins[name] = rss
		}
		if f, err := bench.RSSFile(pid); err == nil {
			m.files[name] = f
		}
	}
	r.mem = append(r.mem, m)
	r.raw["rss_"+strings.ReplaceAll(label, " ", "_")] = map[string]any{"gateway": m.gateway, "plugins": m.plugins}
}

// pluginPIDs asks GET /api/admin/plugins, else lists the gateway's children.
func (r *runner) pluginPIDs(ctx context.Context) map[string]int {
	out := map[string]int{}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, r.gw.URL+"/api/admin/plugins", nil)
	req.Header.Set("Authorization", "Bearer "+r.creds.AdminToken)
	if res, err := http.DefaultClient.Do(req); err == nil {
		var doc struct {
			Plugins []struct {
				Name string `json:"name"`
				PID  int    `json:"pid"`
			} `json:"plugins"`
		}
		if res.StatusCode == http.StatusOK && json.NewDecoder(res.Body).Decode(&doc) == nil {
			for _, p := range doc.Plugins {
				if p.PID > 0 {
					out[p.Name] = p.PID
				}
			}
		}
		res.Body.Close()
	}
	if len(out) == 0 {
		out = r.pluginChildren(r.gw.PID())
		if len(out) > 0 {
			r.notes = append(r.notes, "Plugin pids came from /proc (GET /api/admin/plugins gave none).")
		}
	}
	return out
}

// pluginChildren are the gateway's child processes run from the plugins folder.
func (r *runner) pluginChildren(gatewayPID int) map[string]int {
	out := map[string]int{}
	for _, c := range bench.Children(gatewayPID) {
		if strings.HasPrefix(c.Exe, r.o.pluginsDir+string(filepath.Separator)) {
			out[c.Name] = c.PID
		}
	}
	return out
}

// memoryRows gives one row per process with every sample; the verdict
// holds the largest idle sample to the idle bound and the largest sample
// after a load to the after-load bound.
func (r *runner) memoryRows() {
	cmd := "grep VmRSS /proc/<pid>/status (plugin pids from GET /api/admin/plugins or /proc)"
	if len(r.mem) == 0 {
		r.add(bench.Row{What: "Gateway and plugin RSS", Verdict: "n/a: not measured", Command: cmd})
		return
	}
	row := func(what, name string, idleMax, loadedMax int64, get func(memSample) (int64, bool)) bench.Row {
		var parts []string
		ok := true
		for _, m := range r.mem {
			v, has := get(m)
			if !has {
				continue
			}
			part := bench.MB(v)
			if f, has := m.files[name]; has {
				part += fmt.Sprintf(" (%s file-backed)", bench.MB(f))
			}
			parts = append(parts, part+" "+m.label)
			bound := idleMax
			if m.loaded {
				bound = loadedMax
			}
			ok = ok && v <= bound
		}
		return bench.Row{What: what, Ours: strings.Join(parts, "; "), Reference: "—",
			Target:  fmt.Sprintf("≤ %d MB idle, ≤ %d MB after load (every sample against its bound)", idleMax>>20, loadedMax>>20),
			Verdict: bench.Verdict(true, ok), Command: cmd}
	}
	r.add(row("Gateway RSS", "", 60<<20, 80<<20, func(m memSample) (int64, bool) { return m.gateway, true }))
	names := map[string]bool{}
	for _, m := range r.mem {
		for n := range m.plugins {
			names[n] = true
		}
	}
	sorted := make([]string, 0, len(names))
	for n := range names {
		sorted = append(sorted, n)
	}
	sort.Strings(sorted)
	if len(sorted) == 0 {
		r.add(bench.Row{What: "Plugin RSS", Verdict: "n/a: no plugin process found", Command: cmd})
	}
	for _, n := range sorted {
		r.add(row(fmt.Sprintf("Plugin `%s` RSS", n), n, 20<<20, 30<<20,
			func(m memSample) (int64, bool) { v, ok := m.plugins[n]; return v, ok }))
	}
}

// ---- start-up ----------------------------------------------------------

func (r *runner) startup(ctx context.Context) {
	dataDir := filepath.Join(r.o.work, "startup")
	cmd := fmt.Sprintf("bin/gateway --addr 127.0.0.1:0 --data-dir %s --plugins-dir bin/plugins (no SVC_DATABASE_URL); time from exec to GET /healthz 200", "<fresh folder>")
	first, err := r.startOnce(ctx, dataDir, false)
	firstRow := bench.Row{What: "Start → /healthz 200, first start (initdb)", Reference: "—", Target: "≤ 3 s", Command: cmd}
	if err != nil {
		firstRow.Verdict = "failed: " + firstLine(err.Error())
		r.add(firstRow)
		r.notes = append(r.notes, "First start failed: "+err.Error())
		return
	}
	firstRow.Ours = fmt.Sprintf("%.2f s", first.Seconds())
	firstRow.Verdict = bench.Verdict(true, first <= 3*time.Second)
	r.add(firstRow)

	var warm []time.Duration
	for i := range 3 {
		d, err := r.startOnce(ctx, dataDir, i == 0)
		if err != nil {
			r.notes = append(r.notes, "Start on the initialised database failed: "+err.Error())
			break
		}
		warm = append(warm, d)
	}
	row := bench.Row{What: "Start → /healthz 200, initialised embedded database", Reference: "—", Target: "≤ 1 s",
		Command: strings.Replace(cmd, "<fresh folder>", "<the same folder again>", 1)}
	if len(warm) == 0 {
		row.Verdict = "failed"
		r.add(row)
		return
	}
	sorted := append([]time.Duration(nil), warm...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i] < sorted[j] })
	med := sorted[len(sorted)/2]
	parts := make([]string, len(warm))
	for i, d := range warm {
		parts[i] = fmt.Sprintf("%.2f", d.Seconds())
	}
	row.Ours = fmt.Sprintf("%.2f s (median of %s s)", med.Seconds(), strings.Join(parts, ", "))
	row.Verdict = bench.Verdict(true, med <= time.Second)
	r.add(row)
	r.raw["startup"] = map[string]any{"first_s": first.Seconds(), "initialised_s": parts}
}

// startOnce times one start; with sample it also takes the idle memory
// 2 s after the start.
func (r *runner) startOnce(ctx context.Context, dataDir string, sample bool) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	gw, err := bench.StartGateway(ctx, bench.GatewayOptions{Bin: r.gatewayBin, PluginsDir: r.o.pluginsDir, DataDir: dataDir})
	if err != nil {
		return 0, err
	}
	defer func() {
		if err := gw.Stop(); err != nil {
			r.notes = append(r.notes, err.Error())
		}
	}()
	d, err := gw.WaitHealthy(ctx)
	if err == nil && sample {
		time.Sleep(startSettle)
		r.sampleMemory(fmt.Sprintf("%s after a restart on the initialised embedded database", startSettle), false, gw.PID(), r.pluginChildren(gw.PID()))
	}
	return d, err
}

// ---- the report --------------------------------------------------------

func (r *runner) write() error {
	r.rep.Title = "Benchmark results"
	r.rep.Intro = []string{
		"Written by `make bench` (`go run ./bench/cmd/benchreport`); see bench/README.md for what each figure measures and how. " +
			"Every reference was measured in the same run on the same machine, just before or after our figure; targets are those of shared/PERFORMANCE.md. " +
			"Absolute figures drift between runs and machines: compare ratios.",
	}
	if load := strings.Fields(readFile("/proc/loadavg")); len(load) >= 3 {
		r.rep.Env = append(r.rep.Env, [2]string{"load average at end", strings.Join(load[:3], " ")})
	}
	if r.busyAtStart > 1.0 {
		r.notes = append(r.notes, fmt.Sprintf("The machine was not idle when the run started (1-minute load average %.2f on %d CPUs): "+
			"other work shared the CPUs, see \"not charged to the measured processes\" in the details. Ratios suffer less than absolute figures, but rerun on an idle machine for the record.",
			r.busyAtStart, runtime.NumCPU()))
	}
	notes := append([]string{
		"The user token was obtained through the OAuth code flow of the running gateway (HTML sign-in as the seeded owner, consent, PKCE exchange), as the oauthtest browser does; scopes `pages:read pages:manage`.",
		"The Graph rate limits were raised to 10⁹ calls/minute through `--config` (`rate_limits`): the limiter still counts every call.",
		"The load generator keeps one request in flight per connection (HTTP/1.1 keep-alive) and shares the 2 CPUs with the gateway, the plugin and PostgreSQL, as pgbench does; its latency is from writing the request to reading the whole answer.",
	}, r.notes...)
	for i, n := range notes {
		notes[i] = strings.ReplaceAll(strings.TrimSpace(n), "\n", " ⏎ ")
	}
	if len(r.curves) > 0 {
		r.rep.Sections = append(r.rep.Sections, bench.Section{Title: "Curves: throughput and p99 against connections", Body: r.curvesSection()})
	}
	if len(r.details) > 0 {
		r.rep.Sections = append(r.rep.Sections, bench.Section{Title: "Details", Body: strings.Join(r.details, "\n\n")})
	}
	r.rep.Sections = append(r.rep.Sections, bench.Section{Title: "Notes", Body: "- " + strings.Join(notes, "\n- ")})
	md := r.rep.Markdown()
	fmt.Print(md)
	if err := os.MkdirAll(filepath.Dir(r.o.out), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(r.o.out, []byte(md), 0o644); err != nil {
		return err
	}
	r.raw["rows"] = r.rep.Rows
	raw, _ := json.MarshalIndent(r.raw, "", "  ")
	if err := os.WriteFile(r.o.jsonOut, append(raw, '\n'), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "benchreport: wrote %s and %s in %.0f s\n", r.o.out, r.o.jsonOut, time.Since(r.started).Seconds())
	return nil
}

// ---- helpers -----------------------------------------------------------

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 240 {
		s = s[:240] + "…"
	}
	return s
}

func readFile(p string) string {
	b, _ := os.ReadFile(p)
	return string(b)
}

func cpuModel() string {
	for _, line := range strings.Split(readFile("/proc/cpuinfo"), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return runtime.GOARCH
}

func memTotal() string {
	for _, line := range strings.Split(readFile("/proc/meminfo"), "\n") {
		if v, ok := strings.CutPrefix(line, "MemTotal:"); ok {
			var kb int64
			fmt.Sscan(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), &kb)
			return fmt.Sprintf("%.1f GiB", float64(kb)/(1<<20))
		}
	}
	return "?"
}

func gitDescribe() string {
	out, err := exec.Command("git", "describe", "--always", "--dirty").Output()
	if err != nil {
		return "?"
	}
	return strings.TrimSpace(string(out))
}

// stageBreakdown divides the gateway's and the book plugin's (svcchat's with
// -only send) CPU profiles
// among the stages of a request (bench.GatewayStages, bench.PluginStages)
// and adds the tables to the report. With -only read, the profiles hold
// the Graph read (and the seeding and warmup before it), so the figures are
// also given per measured read, an upper bound.
func (r *runner) stageBreakdown() {
	perRead := r.o.only == "read" && r.reads > 0
	var b strings.Builder
	b.WriteString("**Where the CPU goes** (`make profile`: pprof CPU profiles of the whole run, each sample given to the innermost stage on its stack; `bench.Stages`)")
	if perRead {
		fmt.Fprintf(&b, ", per Graph read: the CPU of %d measured reads plus the seeding and warmup before them", r.reads)
	}
	b.WriteString("\n\n")
	plugin := "book"
	if r.o.only == "send" {
		plugin = "svcchat"
	}
	for _, p := range []struct {
		file   string
		stages []bench.Stage
	}{{"gateway", bench.GatewayStages}, {plugin, bench.PluginStages}} {
		raw, err := os.ReadFile(filepath.Join(r.o.profile, p.file+".cpu.pprof"))
		if err == nil {
			var cpu []bench.StageCPU
			if cpu, err = bench.Stages(raw, p.stages); err == nil {
				n := uint64(0)
				if perRead {
					n = r.reads
				}
				fmt.Fprintf(&b, "%s:\n\n%s\n", p.file, bench.StageTable(cpu, n))
				continue
			}
		}
		fmt.Fprintf(&b, "%s: no breakdown (%v)\n\n", p.file, err)
	}
	r.details = append(r.details, b.String())
}
