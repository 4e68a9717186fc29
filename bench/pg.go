package bench

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/svcplatform/svc/internal/pgembed"
)

// Database is the PostgreSQL database a benchmark runs against: a fresh
// database on the embedded cluster (default, durable settings) or on the
// server of SVC_DATABASE_URL.
type Database struct {
	// URL is the benchmark database (may hold a password: never print it;
	// see Redacted).
	URL string
	// Name is the database's name.
	Name string
	// Embedded tells whether the server is our own embedded cluster.
	Embedded bool
	// PostmasterPID is the embedded server's pid (0 when external).
	PostmasterPID int
	adminURL      string
	cluster       *pgembed.Cluster
	statementsOut string // see statementsEnv
}

// OpenDatabase creates the benchmark database. With externalURL empty it
// starts the embedded cluster in dir with the gateway's default (durable)
// settings; otherwise it creates a database named svc_bench_<time> on that
// server (dropped by Close).
func OpenDatabase(ctx context.Context, dir, externalURL string, log *slog.Logger) (*Database, error) {
	d := &Database{}
	if externalURL == "" {
		c, err := pgembed.Start(ctx, pgembed.Options{Dir: dir, Logger: log})
		if err != nil {
			return nil, err
		}
		if os.Getenv(statementsEnv) != "" {
			if c, err = withStatements(ctx, c, dir, log); err != nil {
				return nil, err
			}
		}
		d.cluster, d.Embedded, d.PostmasterPID = c, true, c.PID()
		d.statementsOut = filepath.Join(dir, "pg_stat_statements.txt")
		d.adminURL, d.Name = c.URL("postgres"), "svc"
		d.URL = c.URL(d.Name)
	} else {
		u, err := url.Parse(externalURL)
		if err != nil {
			return nil, errors.New("SVC_DATABASE_URL is not a URL")
		}
		d.adminURL = externalURL
		d.Name = fmt.Sprintf("svc_bench_%d", time.Now().Unix())
		u.Path = "/" + d.Name
		d.URL = u.String()
	}
	conn, err := pgx.Connect(ctx, d.adminURL)
	if err != nil {
		d.Close()
		return nil, fmt.Errorf("connect to PostgreSQL: %w", err)
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{d.Name}.Sanitize()+" ENCODING 'UTF8' TEMPLATE template0")
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "42P04" && d.Embedded {
		err = nil // a kept work folder from an earlier run
	}
	if err != nil {
		d.Close()
		return nil, fmt.Errorf("create database %s: %w", d.Name, err)
	}
	if d.Embedded && os.Getenv(statementsEnv) != "" {
		if err := d.Exec(ctx, "CREATE EXTENSION IF NOT EXISTS pg_stat_statements"); err != nil {
			d.Close()
			return nil, err
		}
	} else {
		d.statementsOut = ""
	}
	return d, nil
}

// statementsEnv, when set, turns on pg_stat_statements (with
// track_planning) in the embedded cluster; Close then writes the
// statements' figures to <cluster folder>/pg_stat_statements.txt.
const statementsEnv = "SVC_BENCH_PG_STATEMENTS"

func withStatements(ctx context.Context, c *pgembed.Cluster, dir string, log *slog.Logger) (*pgembed.Cluster, error) {
	conn, err := pgx.Connect(ctx, c.URL("postgres"))
	if err != nil {
		return nil, err
	}
	_, err = conn.Exec(ctx, "ALTER SYSTEM SET shared_preload_libraries = 'pg_stat_statements'")
	conn.Close(ctx)
	if err != nil {
		return nil, err
	}
	if err := c.Stop(ctx); err != nil {
		return nil, err
	}
	if c, err = pgembed.Start(ctx, pgembed.Options{Dir: dir, Logger: log}); err != nil {
		return nil, err
	}
	if conn, err = pgx.Connect(ctx, c.URL("postgres")); err != nil {
		return nil, err
	}
	defer conn.Close(ctx)
	if _, err = conn.Exec(ctx, "ALTER SYSTEM SET pg_stat_statements.track_planning = on"); err == nil {
		_, err = conn.Exec(ctx, "SELECT pg_reload_conf()")
	}
	return c, err
}

// writeStatements writes the statements' figures of the benchmark
// database, most total time (planning and execution) first.
func (d *Database) writeStatements(ctx context.Context) {
	conn, err := pgx.Connect(ctx, d.URL)
	if err != nil {
		return
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `SELECT calls, total_plan_time, total_exec_time, mean_plan_time, mean_exec_time, rows,
		left(regexp_replace(query, '\s+', ' ', 'g'), 120)
		FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
		ORDER BY total_plan_time + total_exec_time DESC LIMIT 60`)
	if err != nil {
		return
	}
	defer rows.Close()
	var b strings.Builder
	b.WriteString("calls\ttotal_plan_ms\ttotal_exec_ms\tmean_plan_ms\tmean_exec_ms\trows\tquery\n")
	for rows.Next() {
		var calls, nrows int64
		var tp, te, mp, me float64
		var q string
		if rows.Scan(&calls, &tp, &te, &mp, &me, &nrows, &q) != nil {
			return
		}
		fmt.Fprintf(&b, "%d\t%.1f\t%.1f\t%.4f\t%.4f\t%d\t%s\n", calls, tp, te, mp, me, nrows, q)
	}
	_ = os.WriteFile(d.statementsOut, []byte(b.String()), 0o644)
}

// Close drops the database on an external server, or stops the embedded
// cluster (its folder stays, for a look at its log).
func (d *Database) Close() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if d.cluster != nil {
		if d.statementsOut != "" {
			d.writeStatements(ctx)
		}
		_ = d.cluster.Stop(ctx)
		return
	}
	if d.adminURL == "" || d.Name == "" {
		return
	}
	conn, err := pgx.Connect(ctx, d.adminURL)
	if err != nil {
		return
	}
	defer conn.Close(ctx)
	_, _ = conn.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{d.Name}.Sanitize()+" WITH (FORCE)")
}

// Exec runs statements in the benchmark database.
func (d *Database) Exec(ctx context.Context, sql string, args ...any) error {
	conn, err := pgx.Connect(ctx, d.URL)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, sql, args...)
	return err
}

// Settings reads the server settings that matter for the figures.
func (d *Database) Settings(ctx context.Context) (map[string]string, error) {
	conn, err := pgx.Connect(ctx, d.URL)
	if err != nil {
		return nil, err
	}
	defer conn.Close(ctx)
	out := map[string]string{}
	for _, name := range []string{"server_version", "synchronous_commit", "fsync", "full_page_writes",
		"shared_buffers", "max_connections", "wal_sync_method"} {
		var v string
		if err := conn.QueryRow(ctx, "SELECT current_setting($1)", name).Scan(&v); err != nil {
			return nil, err
		}
		out[name] = v
	}
	return out, nil
}

// Redacted is u without its password.
func Redacted(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return "<database URL>"
	}
	return p.Redacted()
}

// LibpqURL is u without the pgx-only parameters libpq refuses.
func LibpqURL(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return u
	}
	q := p.Query()
	for k := range q {
		switch {
		case strings.HasPrefix(k, "pool_"), k == "statement_cache_capacity", k == "description_cache_capacity",
			k == "default_query_exec_mode", k == "min_read_buffer_size":
			q.Del(k)
		}
	}
	p.RawQuery = q.Encode()
	return p.String()
}

// FindPgbench returns the pgbench binary: on PATH, else beside the newest
// /usr/lib/postgresql/<version>/bin, or "" when there is none.
func FindPgbench() string {
	if p, err := exec.LookPath("pgbench"); err == nil {
		return p
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin/pgbench")
	best, bestV := "", -1
	for _, d := range dirs {
		v, err := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(d))))
		if err == nil && v > bestV {
			best, bestV = d, v
		}
	}
	return best
}

// Pgbench is one pgbench run.
type Pgbench struct {
	// Bin is the pgbench binary.
	Bin string
	// URL is the database (libpq form; see LibpqURL).
	URL string
	// Script is the custom script's text, written to ScriptPath.
	Script     string
	ScriptPath string
	// Clients, Threads and Seconds are -c, -j and -T.
	Clients, Threads, Seconds int
	// Defines are -D name=value variables (:name in the script; with
	// -M prepared they are sent as parameters, like the plugins' queries).
	Defines [][2]string
	// Options is PGOPTIONS for the sessions, e.g. "-c synchronous_commit=on".
	Options string
	// LogDir, when set, has pgbench log every transaction (-l) into files
	// there, from which Run computes the latency percentiles (pgbench's own
	// summary has only the mean). The folder is emptied of earlier logs.
	LogDir string
	// Window, with LogDir, takes the rate and the percentiles from the
	// transactions that ended in the run's last Window only (see
	// readPgbenchLogs); Seconds must leave room for the connections and a
	// warmup before it.
	Window time.Duration
}

// PgbenchResult is what pgbench reported.
type PgbenchResult struct {
	TPS          float64 `json:"tps"`
	LatencyAvgMs float64 `json:"latency_avg_ms"`
	Processed    int64   `json:"processed"`
	Failed       int64   `json:"failed"`
	Command      string  `json:"command"`
	Output       string  `json:"-"`
	// CPU is pgbench's own user+system time.
	CPU time.Duration `json:"-"`
	// Latency is from the transaction log (Pgbench.LogDir), nil without it.
	Latency *Latency `json:"latency_us,omitempty"`
	// WindowSeconds is the period TPS and Latency cover when Pgbench.Window
	// was set (shorter than asked when the connections took longer).
	WindowSeconds float64 `json:"window_s,omitempty"`
}

// Command is the shell command that runs p (the URL's password redacted).
func (p Pgbench) Command() string {
	var b strings.Builder
	if p.Options != "" {
		fmt.Fprintf(&b, "PGOPTIONS='%s' ", p.Options)
	}
	fmt.Fprintf(&b, "%s -n -M prepared -c %d -j %d -T %d", filepath.Base(p.Bin), p.Clients, p.Threads, p.Seconds)
	if p.LogDir != "" {
		b.WriteString(" -l")
	}
	for _, d := range p.Defines {
		fmt.Fprintf(&b, " -D %s=%s", d[0], d[1])
	}
	fmt.Fprintf(&b, " -f %s '%s'", filepath.Base(p.ScriptPath), Redacted(p.URL))
	return b.String()
}

var (
	reTPS       = regexp.MustCompile(`(?m)^tps = ([0-9.]+)`)
	reLatency   = regexp.MustCompile(`(?m)^latency average = ([0-9.]+) ms`)
	reProcessed = regexp.MustCompile(`(?m)^number of transactions actually processed: ([0-9]+)`)
	reFailed    = regexp.MustCompile(`(?m)^number of failed transactions: ([0-9]+)`)
)

// Run runs pgbench and parses its summary.
func (p Pgbench) Run(ctx context.Context) (*PgbenchResult, error) {
	if err := os.WriteFile(p.ScriptPath, []byte(p.Script), 0o644); err != nil {
		return nil, err
	}
	args := []string{"-n", "-M", "prepared", "-c", strconv.Itoa(p.Clients), "-j", strconv.Itoa(p.Threads),
		"-T", strconv.Itoa(p.Seconds)}
	for _, d := range p.Defines {
		args = append(args, "-D", d[0]+"="+d[1])
	}
	prefix := ""
	if p.LogDir != "" {
		if err := os.MkdirAll(p.LogDir, 0o755); err != nil {
			return nil, err
		}
		prefix = filepath.Join(p.LogDir, "pgbench_log")
		old, _ := filepath.Glob(prefix + ".*")
		for _, f := range old {
			_ = os.Remove(f)
		}
		args = append(args, "-l", "--log-prefix="+prefix)
	}
	args = append(args, "-f", p.ScriptPath, p.URL)
	ctx, cancel := context.WithTimeout(ctx, time.Duration(p.Seconds+60)*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, p.Bin, args...)
	cmd.Env = os.Environ()
	if p.Options != "" {
		cmd.Env = append(cmd.Env, "PGOPTIONS="+p.Options)
	}
	out, err := cmd.CombinedOutput()
	res := &PgbenchResult{Command: p.Command(), Output: string(out)}
	if cmd.ProcessState != nil {
		res.CPU = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	if err != nil {
		return res, fmt.Errorf("pgbench: %v: %s", err, tail(string(out)))
	}
	m := reTPS.FindSubmatch(out)
	if m == nil {
		return res, fmt.Errorf("pgbench printed no tps: %s", tail(string(out)))
	}
	res.TPS, _ = strconv.ParseFloat(string(m[1]), 64)
	if m := reLatency.FindSubmatch(out); m != nil {
		res.LatencyAvgMs, _ = strconv.ParseFloat(string(m[1]), 64)
	}
	if m := reProcessed.FindSubmatch(out); m != nil {
		res.Processed, _ = strconv.ParseInt(string(m[1]), 10, 64)
	}
	if m := reFailed.FindSubmatch(out); m != nil {
		res.Failed, _ = strconv.ParseInt(string(m[1]), 10, 64)
	}
	if prefix != "" {
		w, err := readPgbenchLogs(prefix, p.Window)
		if err != nil {
			return res, err
		}
		res.Latency = &w.Latency
		if p.Window > 0 {
			res.TPS, res.WindowSeconds, res.Failed = w.TPS, w.Seconds, int64(w.Failed)
		}
	}
	return res, nil
}

// PgbenchTx is one transaction of a pgbench log.
type PgbenchTx struct {
	// End is when it finished, in µs since the Unix epoch.
	End int64
	// Latency is how long it took; zero for a failed or skipped one.
	Latency time.Duration
	// Failed is true for a transaction logged as skipped or failed.
	Failed bool
}

// readPgbenchLogs reads every log file of one run (pgbench writes one per
// thread: prefix.<pid> and prefix.<pid>.<thread>) and summarises the
// transactions that ended in the run's last window (all of them when window
// is zero): pgbench's -T counts its connection set-up, which on a busy
// machine takes seconds at 128 clients, so the rate and the percentiles
// come from the steady end of the run, as ours come after a warmup.
func readPgbenchLogs(prefix string, window time.Duration) (*pgbenchWindow, error) {
	files, _ := filepath.Glob(prefix + ".*")
	if len(files) == 0 {
		return nil, fmt.Errorf("pgbench wrote no transaction log %s.*", prefix)
	}
	var txs []PgbenchTx
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			return nil, err
		}
		_, _, err = ReadPgbenchLog(fh, func(tx PgbenchTx) { txs = append(txs, tx) })
		fh.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
	}
	w := summarizeWindow(txs, window)
	if w == nil {
		return nil, fmt.Errorf("pgbench's transaction log %s.* holds no completed transaction", prefix)
	}
	return w, nil
}

// pgbenchWindow is what the log says of a run's last window.
type pgbenchWindow struct {
	Seconds float64
	TPS     float64
	Failed  uint64
	Latency Latency
}

// summarizeWindow keeps the transactions that ended within window of the
// last one and after the first one began (a run whose connections took most
// of it has a shorter window, which Seconds tells); nil without any
// completed transaction.
func summarizeWindow(txs []PgbenchTx, window time.Duration) *pgbenchWindow {
	var last, firstStart int64
	have := false
	for _, tx := range txs {
		if tx.Failed {
			continue
		}
		start := tx.End - tx.Latency.Microseconds()
		if !have || tx.End > last {
			last = tx.End
		}
		if !have || start < firstStart {
			firstStart = start
		}
		have = true
	}
	if !have {
		return nil
	}
	from := firstStart
	if window > 0 {
		from = max(from, last-window.Microseconds())
	}
	var h Histogram
	var failed uint64
	for _, tx := range txs {
		if window > 0 && (tx.End <= from || tx.End > last) {
			continue
		}
		if tx.Failed {
			failed++
			continue
		}
		h.Record(tx.Latency)
	}
	w := &pgbenchWindow{Seconds: float64(last-from) / 1e6, Failed: failed, Latency: latencyOf(&h)}
	if w.Seconds > 0 {
		w.TPS = float64(h.Count()) / w.Seconds
	}
	return w
}

// ReadPgbenchLog reads a pgbench per-transaction log (-l; the lines are
// "client_id transaction_no time script_no time_epoch time_us" and, with
// some options, more fields) and calls each for every transaction: time is
// its latency in µs, time_epoch and time_us when it ended. Transactions
// logged as "skipped" or failed (a word in place of the time) are counted
// in failed and passed with Failed set. A line of another shape is an error
// naming it.
func ReadPgbenchLog(r io.Reader, each func(PgbenchTx)) (done, failed uint64, err error) {
	sc := bufio.NewScanner(r)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		f := strings.Fields(line)
		if len(f) < 6 {
			return done, failed, fmt.Errorf("line %d: %d fields, want at least 6", n, len(f))
		}
		for _, i := range []int{0, 1, 3} {
			if _, err := strconv.ParseUint(f[i], 10, 64); err != nil {
				return done, failed, fmt.Errorf("line %d: field %d %q is not a whole number", n, i+1, short(f[i]))
			}
		}
		sec, err1 := strconv.ParseInt(f[4], 10, 64)
		usec, err2 := strconv.ParseInt(f[5], 10, 64)
		if err1 != nil || err2 != nil || sec < 0 || usec < 0 || usec >= 1e6 || sec > 1<<40 {
			return done, failed, fmt.Errorf("line %d: end time %q %q is not seconds and microseconds", n, short(f[4]), short(f[5]))
		}
		end := sec*1e6 + usec
		us, err := strconv.ParseUint(f[2], 10, 63)
		if err != nil {
			if isWord(f[2]) { // skipped, failed, serialization, deadlock
				failed++
				each(PgbenchTx{End: end, Failed: true})
				continue
			}
			return done, failed, fmt.Errorf("line %d: latency %q is neither a number of µs nor a word", n, short(f[2]))
		}
		if us > uint64(end) {
			return done, failed, fmt.Errorf("line %d: latency %d µs is longer than the time since the epoch", n, us)
		}
		each(PgbenchTx{End: end, Latency: time.Duration(us) * time.Microsecond})
		done++
	}
	if err := sc.Err(); err != nil {
		return done, failed, fmt.Errorf("line %d: %w", n+1, err)
	}
	return done, failed, nil
}

func isWord(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 'a' || c > 'z' {
			return false
		}
	}
	return s != ""
}

func short(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

// tail is the end of a command's output, where its errors are.
func tail(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > 800 {
		s = "…" + s[len(s)-800:]
	}
	return s
}
