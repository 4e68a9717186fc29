package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/svcplatform/svc/bench"
)

// Curves: the Graph read and the post write at 1 … 128 connections, each
// point beside pgbench running the same statements at the same concurrency,
// drawn as throughput and p99 against connections (bench/curves.svg) and
// tabled in RESULTS.md. A point is short (-curve-d after -curve-warmup) so
// that the whole set fits in a few minutes on 2 cores; the points are
// noisier than the long single figures above them, and say so.

// curveScenario is one pair of lines: a request of ours and the pgbench
// script of the statements its handlers run.
type curveScenario struct {
	key   string // names the pgbench files
	title string
	// short titles the scenario's panels in the image.
	short string
	// unit is what one request is, for the axis ("reads/s").
	unit string
	// load is our request at n connections (Duration and Warmup are set
	// by the runner).
	load func(n int) bench.Load
	// loadCmd is the loadgen command at "<N>" connections.
	loadCmd string
	// check runs one request first and says why the scenario cannot be
	// measured, if it cannot (a wrong answer would make every point a lie).
	check func(ctx context.Context) error
	// script is the pgbench script; defines its -D variables; options its
	// PGOPTIONS.
	script  string
	defines [][2]string
	options string
	// sql says where the script's statements come from.
	sql string
	// setup runs before the first point, teardown after the last.
	setup, teardown string
}

// curvePoint is one concurrency of one scenario.
type curvePoint struct {
	Connections int           `json:"connections"`
	Ours        *bench.Result `json:"ours,omitempty"`
	OursError   string        `json:"ours_error,omitempty"`
	// LoadgenShare is the load generator's share of the machine's CPUs
	// while it measured ours; GatewayCPU the gateway's and its plugins'
	// CPU per request, in µs.
	LoadgenShare float64              `json:"loadgen_cpu_share"`
	GatewayCPU   float64              `json:"gateway_cpu_us_per_request"`
	Ref          *bench.PgbenchResult `json:"pgbench,omitempty"`
	RefError     string               `json:"pgbench_error,omitempty"`
	// PgbenchShare is pgbench's own share of the CPUs during its run.
	PgbenchShare float64 `json:"pgbench_cpu_share"`
}

// curve is a scenario with its points, or why it has none.
type curve struct {
	sc      *curveScenario
	Key     string       `json:"key"`
	Title   string       `json:"title"`
	Short   string       `json:"short"`
	Blocked string       `json:"blocked,omitempty"`
	Points  []curvePoint `json:"points"`
}

// parseConns reads the connection counts of flag (-curve-conns,
// -completions-conns): ascending positive connection counts.
func parseConns(flag, s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 || n > 1000 {
			return nil, fmt.Errorf("-%s: %q is not a number of connections from 1 to 1000", flag, f)
		}
		if len(out) > 0 && n <= out[len(out)-1] {
			return nil, fmt.Errorf("-%s: %d does not come after %d (give them in ascending order)", flag, n, out[len(out)-1])
		}
		out = append(out, n)
	}
	return out, nil
}

// Where the statements live: the first path that exists wins (the book
// plugin's queries may move into plugins/book/sql).
var (
	bookQueries     = []string{"plugins/book/sql/queries/posts.sql", "sql/book/queries/posts.sql"}
	identityQueries = []string{"sql/core/queries/identity.sql"}
	outboxQueries   = []string{"sql/sdk/queries/outbox.sql"}
)

// query reads a named statement and binds its parameters.
func query(name string, paths []string, args map[string]string) (string, string, error) {
	q, path, err := bench.ReadNamedQuery(name, paths...)
	if err != nil {
		return "", "", err
	}
	q, err = bench.BindNamed(q, args)
	if err != nil {
		return "", "", fmt.Errorf("%s in %s: %w", name, path, err)
	}
	return q, path + " " + name, nil
}

// curveBatch is the number of reads in the batch scenario (the most a
// batch may carry).
const curveBatch = 50

// expandFields is the read with an edge expanded: the Page and, nested,
// its newest posts (the gateway reads the edge as a second Graph call).
const expandFields = "id,name,posts.limit(10){id,content,created_time}"

// curveScenarios builds the scenarios; one whose statements cannot be read
// comes back blocked, the others still run.
func (r *runner) curveScenarios() []*curve {
	page, user, app := r.creds.Page.ID, r.creds.Users["owner"].ID, r.creds.App.ID
	auth := "-H 'Authorization: Bearer $TOKEN'"
	readLoad := func(url string) func(int) bench.Load {
		return func(n int) bench.Load {
			return bench.Load{URL: url, Connections: n, Headers: []bench.Header{r.authHeader()}}
		}
	}
	list := func(lim string) (string, string, error) {
		return query("ListPostsFirst", bookQueries, map[string]string{"page_id": ":page_id", "lim": lim})
	}
	var out []*curve
	add := func(sc *curveScenario, err error) {
		c := &curve{sc: sc, Key: sc.key, Title: sc.title, Short: sc.short}
		if err != nil {
			c.Blocked = firstLine(err.Error())
		}
		out = append(out, c)
	}

	// The read, 10 and 100 posts: the plugin asks for one more than the
	// limit, to know whether there is a next page.
	for _, lim := range []int{10, 100} {
		url := r.graphURL() + "&limit=" + strconv.Itoa(lim)
		sc := &curveScenario{key: fmt.Sprintf("read%d", lim), title: fmt.Sprintf("Graph read page/<id>/posts?limit=%d", lim),
			short: fmt.Sprintf("Read, limit=%d", lim),
			unit:  "reads/s", load: readLoad(url), loadCmd: fmt.Sprintf("go run ./bench/cmd/loadgen -c <N> %s '%s'", auth, url),
			check:   func(ctx context.Context) error { return r.checkList(ctx, url, lim) },
			defines: [][2]string{{"page_id", page}, {"lim", strconv.Itoa(lim + 1)}}}
		q, src, err := list(":lim")
		sc.script, sc.sql = q+"\n", src
		add(sc, err)
	}

	// The read with an edge expanded: GetPage (the Page, then the caller's
	// access to it, as the core Graph's handler reads them) and the posts.
	{
		u := r.gw.URL + "/api/v1/graph?node=page/" + page + "&fields=" + url.QueryEscape(expandFields)
		sc := &curveScenario{key: "expand", title: "Graph read page/<id>?fields=" + expandFields,
			short: "Read, Page + posts edge expanded (fields=)",
			unit:  "reads/s", load: readLoad(u), loadCmd: fmt.Sprintf("go run ./bench/cmd/loadgen -c <N> %s '%s'", auth, u),
			check:   func(ctx context.Context) error { return r.checkExpand(ctx, u) },
			defines: [][2]string{{"page_id", page}, {"user_id", user}, {"no_app", "0"}, {"lim", "11"}}}
		var parts, srcs []string
		var err error
		for _, q := range []struct {
			name  string
			paths []string
			args  map[string]string
		}{
			{"GetPage", identityQueries, map[string]string{"id": ":page_id"}},
			{"PageAccess", identityQueries, map[string]string{"page_id": ":page_id", "user_id": ":user_id", "app_id": ":no_app"}},
			{"ListPostsFirst", bookQueries, map[string]string{"page_id": ":page_id", "lim": ":lim"}},
		} {
			s, src, e := query(q.name, q.paths, q.args)
			if e != nil {
				err = e
				break
			}
			parts, srcs = append(parts, s), append(srcs, src)
		}
		sc.script, sc.sql = strings.Join(parts, "\n")+"\n", strings.Join(srcs, "; ")
		add(sc, err)
	}

	// A batch of 50 reads of 10 posts in one request; pgbench runs the 50
	// statements in one script (each its own transaction, as in the plugin).
	{
		item := map[string]string{"method": "GET", "relative_url": "page/" + page + "/posts?limit=10"}
		items := make([]map[string]string, curveBatch)
		for i := range items {
			items[i] = item
		}
		body, _ := json.Marshal(map[string]any{"batch": items})
		u := r.gw.URL + "/api/v1/graph"
		sc := &curveScenario{key: "batch", title: fmt.Sprintf("Graph batch of %d reads page/<id>/posts?limit=10", curveBatch),
			short: fmt.Sprintf("Batch of %d reads (limit=10)", curveBatch),
			unit:  "batches/s",
			load: func(n int) bench.Load {
				return bench.Load{Method: "POST", URL: u, Connections: n, Body: body,
					Headers: []bench.Header{r.authHeader(), {Name: "Content-Type", Value: "application/json"}}}
			},
			loadCmd: fmt.Sprintf("go run ./bench/cmd/loadgen -c <N> -m POST %s -H 'Content-Type: application/json' -body '{\"batch\":[%d × {\"method\":\"GET\",\"relative_url\":\"page/%s/posts?limit=10\"}]}' '%s'", auth, curveBatch, page, u),
			check:   func(ctx context.Context) error { return r.checkBatch(ctx, u, body) },
			defines: [][2]string{{"page_id", page}, {"lim", "11"}}}
		q, src, err := list(":lim")
		sc.script, sc.sql = strings.Repeat(q+"\n", curveBatch), fmt.Sprintf("%d × %s", curveBatch, src)
		add(sc, err)
	}

	// The post write: the book plugin's transaction (CreatePost, then the
	// SDK's InsertEvent into the outbox) against copies of book.posts and
	// core.outbox made with LIKE … INCLUDING ALL (and the outbox's queue
	// trigger, outboxQueue), so that the reference neither feeds the
	// gateway's outbox dispatcher nor drifts from the real tables' columns,
	// defaults, indexes and trigger.
	{
		body := `{"content":"Curve post {{counter}}: ☕ 咖啡 🚀","audience":"everyone"}`
		sc := &curveScenario{key: "write", title: "Graph post write POST page/<id>/posts", unit: "posts/s",
			short: "Post write (row + outbox event)",
			load: func(n int) bench.Load {
				return bench.Load{Method: "POST", URL: r.graphURL(), Connections: n, BodyFunc: bench.Template(body),
					Headers: []bench.Header{r.authHeader(), {Name: "Content-Type", Value: "application/json"}}}
			},
			loadCmd: fmt.Sprintf("go run ./bench/cmd/loadgen -c <N> -m POST %s -H 'Content-Type: application/json' -body '%s' '%s'", auth, body, r.graphURL()),
			check:   func(context.Context) error { return nil }, // the seed wrote through the same path
			defines: [][2]string{{"page_id", page}, {"user_id", user}, {"app_id", app}},
			options: "-c synchronous_commit=on",
			setup: "DROP SCHEMA IF EXISTS svcbench_curves CASCADE; CREATE SCHEMA svcbench_curves;\n" +
				"CREATE TABLE svcbench_curves.posts (LIKE book.posts INCLUDING ALL);\n" +
				"CREATE TABLE svcbench_curves.outbox (LIKE core.outbox INCLUDING ALL);" + outboxQueue("svcbench_curves.outbox"),
			teardown: "DROP SCHEMA IF EXISTS svcbench_curves CASCADE"}
		// CreatePost may write the outbox event itself (a data-modifying
		// WITH: one statement, its own transaction) or leave it to the SDK's
		// InsertEvent in the plugin's transaction; the reference follows
		// whichever the query file says.
		evtArgs := map[string]string{"type": "'book.post.created'", "event_type": "'book.post.created'",
			"id": "'evt_pgbench_' || :client_id || '_' || :evt", "event_id": "'evt_pgbench_' || :client_id || '_' || :evt",
			"page_id": ":page_id", "app_id": "NULL", "ordering_key": "NULL",
			"data": `'{"postId":"1000000001","pageId":"` + page + `","content":"pgbench curve post: ☕ 咖啡 🚀","audience":"everyone"}'`}
		postArgs := map[string]string{"page_id": ":page_id", "author_user_id": ":user_id", "app_id": ":app_id",
			"content": "'pgbench curve post: ☕ 咖啡 🚀'", "audience": "'everyone'",
			"event_id": evtArgs["event_id"], "event_type": evtArgs["event_type"],
			"event_page_id": ":page_id::text", "event_app_id": "''", "event_ordering_key": "''",
			"event_data": `'{"pageId":"` + page + `","content":"pgbench curve post: ☕ 咖啡 🚀","audience":"everyone"}'`}
		post, src1, err := query("CreatePost", bookQueries, postArgs)
		mirror := func(q string) string {
			q = strings.ReplaceAll(q, "book.posts", "svcbench_curves.posts")
			return strings.ReplaceAll(q, "core.outbox", "svcbench_curves.outbox")
		}
		switch {
		case err != nil:
		case strings.Contains(post, "core.outbox"):
			sc.script = "\\set evt random(1, 1000000000000000)\n" + mirror(post) + "\n"
			sc.sql = src1 + " (one statement; tables: LIKE … INCLUDING ALL copies in schema svcbench_curves)"
		default:
			var evt, src2 string
			evt, src2, err = query("InsertEvent", outboxQueries, evtArgs)
			sc.script = "\\set evt random(1, 1000000000000000)\nBEGIN;\n" + mirror(post) + "\n" + mirror(evt) + "\nCOMMIT;\n"
			sc.sql = src1 + "; " + src2 + " (tables: LIKE … INCLUDING ALL copies in schema svcbench_curves)"
		}
		add(sc, err)
	}
	return out
}

// checkList reads a list once: it must answer a page of n posts.
func (r *runner) checkList(ctx context.Context, u string, n int) error {
	body, err := r.get(ctx, u)
	if err != nil {
		return err
	}
	var doc struct {
		Data []json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(body, &doc); err != nil || len(doc.Data) != n {
		return fmt.Errorf("the read answered no page of %d posts: %s", n, firstLine(string(body)))
	}
	return nil
}

// checkExpand reads the Page with its posts edge once.
func (r *runner) checkExpand(ctx context.Context, u string) error {
	body, err := r.get(ctx, u)
	if err != nil {
		return err
	}
	var doc struct {
		ID    string `json:"id"`
		Posts struct {
			Data []struct {
				Content string `json:"content"`
			} `json:"data"`
		} `json:"posts"`
	}
	if err := json.Unmarshal(body, &doc); err != nil || doc.ID == "" || len(doc.Posts.Data) != 10 || doc.Posts.Data[0].Content == "" {
		return fmt.Errorf("the expanded read answered no Page with 10 posts: %s", firstLine(string(body)))
	}
	return nil
}

// checkBatch sends the batch once: every item must answer 200.
func (r *runner) checkBatch(ctx context.Context, u string, body []byte) error {
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+r.token)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	var answers []struct {
		Code int    `json:"code"`
		Body string `json:"body"`
	}
	if res.StatusCode != http.StatusOK || json.Unmarshal(b, &answers) != nil || len(answers) != curveBatch {
		return fmt.Errorf("the batch answered %d: %s", res.StatusCode, firstLine(string(b)))
	}
	for i, a := range answers {
		if a.Code != http.StatusOK {
			return fmt.Errorf("batch item %d answered %d: %s", i, a.Code, firstLine(a.Body))
		}
	}
	return nil
}

func (r *runner) get(ctx context.Context, u string) ([]byte, error) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	req.Header.Set("Authorization", "Bearer "+r.token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET answered %d: %s", res.StatusCode, firstLine(string(body)))
	}
	return body, nil
}

// measureCurves runs every scenario at every concurrency: ours, then
// pgbench, point by point, so that both sides of a point see the same
// minute of the machine.
func (r *runner) measureCurves(ctx context.Context) {
	curves := r.curveScenarios()
	for _, c := range curves {
		if c.Blocked != "" {
			r.step("curve " + c.Key + " blocked: " + c.Blocked)
			continue
		}
		if err := c.sc.check(ctx); err != nil {
			c.Blocked = firstLine(err.Error())
			r.step("curve " + c.Key + " blocked: " + c.Blocked)
			continue
		}
		if c.sc.setup != "" && r.pgbench != "" {
			if err := r.db.Exec(ctx, c.sc.setup); err != nil {
				r.notes = append(r.notes, "Curve "+c.Key+": the reference tables could not be made: "+err.Error())
				r.pgbench = ""
			}
		}
		for _, n := range r.o.curveConns {
			if ctx.Err() != nil {
				break
			}
			c.Points = append(c.Points, r.curvePoint(ctx, c.sc, n))
		}
		if c.sc.teardown != "" && r.pgbench != "" {
			_ = r.db.Exec(ctx, c.sc.teardown)
		}
	}
	r.curves = curves
	r.raw["curves"] = curves
	if err := r.writeCurvesSVG(); err != nil {
		r.notes = append(r.notes, "The curves image could not be written: "+err.Error())
	}
}

func (r *runner) curvePoint(ctx context.Context, sc *curveScenario, n int) curvePoint {
	p := curvePoint{Connections: n}
	r.step(fmt.Sprintf("curve %s, %d connections, %s + %s warmup", sc.key, n, r.o.curveDur, r.o.curveWarmup))
	l := sc.load(n)
	l.Duration, l.Warmup = r.o.curveDur, r.o.curveWarmup
	res, a, b, err := r.runLoad(ctx, l)
	if err != nil {
		p.OursError = firstLine(err.Error())
	} else {
		p.Ours = res
		if wall := b.at.Sub(a.at).Seconds(); wall > 0 {
			p.LoadgenShare = (b.self - a.self).Seconds() / wall / float64(runtime.NumCPU())
		}
		if res.Requests > 0 {
			p.GatewayCPU = float64((b.gateway - a.gateway).Nanoseconds()) / 1e3 / float64(res.Requests)
		}
	}
	if r.pgbench == "" {
		p.RefError = "pgbench not found"
		return p
	}
	r.step(fmt.Sprintf("curve %s, pgbench, %d clients", sc.key, n))
	pg := bench.Pgbench{Bin: r.pgbench, URL: bench.LibpqURL(r.db.URL), Script: sc.script,
		ScriptPath: filepath.Join(r.o.work, "curve_"+sc.key+".sql"), Clients: n, Threads: min(2, n),
		Seconds: pgbenchSeconds(r.o.curveWarmup, r.o.curveDur, n), Defines: sc.defines, Options: sc.options,
		LogDir: filepath.Join(r.o.work, "pgbench_logs"), Window: r.o.curveDur}
	start := time.Now()
	ref, err := pg.Run(ctx)
	if err != nil {
		p.RefError = firstLine(err.Error())
		return p
	}
	p.Ref = ref
	if wall := time.Since(start).Seconds(); wall > 0 {
		p.PgbenchShare = ref.CPU.Seconds() / wall / float64(runtime.NumCPU())
	}
	return p
}

// pgbenchSeconds is pgbench's -T for a curve point: its -T counts the
// clients' connection set-up (seconds at 128 clients on a busy machine), so
// the run is longer than the measured window by the warmup and an allowance
// for the connections, and its rate and percentiles come from the last
// curve-d of its transaction log (bench.Pgbench.Window).
func pgbenchSeconds(warmup, dur time.Duration, clients int) int {
	allowance := time.Second + time.Duration(clients)*25*time.Millisecond
	return int((warmup + dur + allowance + time.Second - 1) / time.Second)
}

// ---- the report and the image -----------------------------------------

// curvesSection is the Markdown of the curves: one table per scenario, with
// its commands.
func (r *runner) curvesSection() string {
	var b strings.Builder
	img := r.o.curvesSVG
	if rel, err := filepath.Rel(filepath.Dir(r.o.out), img); err == nil {
		img = rel
	}
	fmt.Fprintf(&b, "![Throughput and p99 against connections, ours beside pgbench](%s)\n\n", filepath.ToSlash(img))
	fmt.Fprintf(&b, "Each point: our request through the gateway for %s after a %s warmup (load generator: one request in flight per connection), "+
		"then pgbench running the statements our handlers run, at the same concurrency (`-c N -j min(2,N)`, `-M prepared`). "+
		"pgbench's `-T` counts its clients' connection set-up, which takes seconds at 128 clients on a busy machine, so it runs for T = %s + %s + 1 s + 25 ms per client "+
		"and its rate and percentiles are those of the transactions that ended in the last %s of its transaction log (`-l`), as ours come after a warmup. "+
		"Points are short and this machine is shared: read the shape, not the third digit. "+
		"\"ratio\" is our 2xx rate over pgbench's tps; \"loadgen CPU\" is the load generator's share of the %d CPUs during our run (it shares them with everything measured), "+
		"\"pgbench CPU\" pgbench's own share during its run.\n\n",
		r.o.curveDur, r.o.curveWarmup, r.o.curveWarmup, r.o.curveDur, r.o.curveDur, runtime.NumCPU())
	for _, c := range r.curves {
		fmt.Fprintf(&b, "### %s\n\n", c.Title)
		if c.Blocked != "" {
			fmt.Fprintf(&b, "Not measured: %s\n\n", c.Blocked)
			continue
		}
		b.WriteString("| connections | ours " + c.sc.unit + " (2xx) | p50 | p99 | errors | gateway+plugins CPU/request | loadgen CPU | pgbench tps | p50 | p99 | pgbench CPU | ratio |\n")
		b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|\n")
		for _, p := range c.Points {
			ours := []string{"—", "—", "—", "—", "—", "—"}
			if p.Ours != nil && p.Ours.Requests == 0 {
				ours = []string{"0: no request completed within " + r.o.curveDur.String(), "—", "—", "—", "—", bench.Pct(p.LoadgenShare)}
			} else if p.Ours != nil {
				o := p.Ours
				ours = []string{bench.Num(o.OKPerSec), bench.Ms(o.Latency.P50), bench.Ms(o.Latency.P99),
					strconv.FormatUint(o.ErrorTotal, 10), fmt.Sprintf("%.0f µs", p.GatewayCPU), bench.Pct(p.LoadgenShare)}
			} else if p.OursError != "" {
				ours[0] = "failed: " + p.OursError
			}
			ref := []string{"—", "—", "—", "—"}
			ratio := "—"
			if p.Ref != nil {
				ref = []string{bench.Num(p.Ref.TPS), "—", "—", bench.Pct(p.PgbenchShare)}
				if p.Ref.WindowSeconds > 0 && p.Ref.WindowSeconds < r.o.curveDur.Seconds()*0.95 {
					ref[0] += fmt.Sprintf(" (over %.1f s: the connections took the rest)", p.Ref.WindowSeconds)
				}
				if p.Ref.Latency != nil {
					ref[1], ref[2] = bench.Ms(p.Ref.Latency.P50), bench.Ms(p.Ref.Latency.P99)
				}
				if p.Ours != nil && p.Ref.TPS > 0 {
					ratio = bench.Pct(p.Ours.OKPerSec / p.Ref.TPS)
				}
			} else if p.RefError != "" {
				ref[0] = "failed: " + p.RefError
			}
			cells := append(append(append([]string{strconv.Itoa(p.Connections)}, ours...), ref...), ratio)
			for i := range cells {
				cells[i] = strings.ReplaceAll(cells[i], "|", "\\|")
			}
			b.WriteString("| " + strings.Join(cells, " | ") + " |\n")
		}
		var pgCmd string
		for _, p := range c.Points {
			if p.Ref != nil {
				pgCmd = strings.Replace(p.Ref.Command, fmt.Sprintf("-c %d -j %d -T %d", p.Connections, min(2, p.Connections),
					pgbenchSeconds(r.o.curveWarmup, r.o.curveDur, p.Connections)), "-c <N> -j <min(2,N)> -T <T>", 1)
				break
			}
		}
		fmt.Fprintf(&b, "\nOurs: `%s` (with `-d %s -warmup %s`).", c.sc.loadCmd, r.o.curveDur, r.o.curveWarmup)
		if pgCmd != "" {
			fmt.Fprintf(&b, " Reference: `%s`, script `%s`:", pgCmd, "curve_"+c.Key+".sql")
			script := c.sc.script
			if c.Key == "batch" {
				first, _, _ := strings.Cut(script, ";\n")
				script = first + fmt.Sprintf(";\n-- … the same statement %d times in all\n", curveBatch)
			}
			fmt.Fprintf(&b, "\n\n```sql\n%s```\n\nThe statements are read from %s.\n\n", script, c.sc.sql)
		} else {
			b.WriteString("\n\n")
		}
	}
	return b.String()
}

// writeCurvesSVG draws two panels per scenario: throughput and p99 against
// connections, ours beside pgbench.
func (r *runner) writeCurvesSVG() error {
	ticks := make([]float64, len(r.o.curveConns))
	for i, n := range r.o.curveConns {
		ticks[i] = float64(n)
	}
	ch := bench.Chart{Title: "Ours (gateway → plugin → PostgreSQL) beside pgbench running the same SQL",
		Subtitle: fmt.Sprintf("make bench, %s, %d CPUs shared by everything measured (a shared machine: noisy), commit %s; each point %s after %s warmup",
			time.Now().UTC().Format("2006-01-02 15:04 UTC"), runtime.NumCPU(), gitDescribe(), r.o.curveDur, r.o.curveWarmup)}
	for _, c := range r.curves {
		if c.Blocked != "" || len(c.Points) == 0 {
			continue
		}
		var ourT, refT, ourP, refP []bench.Point
		for _, p := range c.Points {
			x := float64(p.Connections)
			if p.Ours != nil {
				ourT = append(ourT, bench.Point{X: x, Y: p.Ours.OKPerSec})
				if p.Ours.Requests > 0 { // no p99 of nothing: a gap
					ourP = append(ourP, bench.Point{X: x, Y: p.Ours.Latency.P99 / 1e3})
				}
			}
			if p.Ref != nil {
				refT = append(refT, bench.Point{X: x, Y: p.Ref.TPS})
				if p.Ref.Latency != nil {
					refP = append(refP, bench.Point{X: x, Y: p.Ref.Latency.P99 / 1e3})
				}
			}
		}
		ours, ref := "ours", "pgbench, same SQL"
		ch.Panels = append(ch.Panels,
			bench.Panel{Title: c.Short + ": throughput", XLabel: "connections (log scale)", YLabel: c.sc.unit, XTicks: ticks,
				Series: []bench.Series{{Name: ours, Points: ourT}, {Name: ref, Points: refT, Dashed: true}}},
			bench.Panel{Title: c.Short + ": p99", XLabel: "connections (log scale)", YLabel: "p99 latency, ms", XTicks: ticks,
				Series: []bench.Series{{Name: ours, Points: ourP}, {Name: ref, Points: refP, Dashed: true}}})
	}
	if len(ch.Panels) == 0 {
		return fmt.Errorf("no scenario was measured")
	}
	var buf bytes.Buffer
	if err := ch.WriteSVG(&buf); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(r.o.curvesSVG), 0o755); err != nil {
		return err
	}
	return os.WriteFile(r.o.curvesSVG, buf.Bytes(), 0o644)
}
