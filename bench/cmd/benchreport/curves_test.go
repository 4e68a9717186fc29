package main

import (
	"bytes"
	"encoding/xml"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/svcplatform/svc/bench"
)

func TestCurveConnectionsAreAscendingPositiveCounts(t *testing.T) {
	got, err := parseConns("curve-conns", "1, 8,32,64,128")
	if err != nil || !reflect.DeepEqual(got, []int{1, 8, 32, 64, 128}) {
		t.Errorf("got %v, %v", got, err)
	}
	for _, bad := range []string{"", "0", "8,1", "8,8", "x", "1,,2", "-1", "1001"} {
		if _, err := parseConns("curve-conns", bad); err == nil {
			t.Errorf("parseConns(%q) accepted", bad)
		}
	}
}

func FuzzParseConns(f *testing.F) {
	f.Add("1,8,32,64,128")
	f.Add("3, 2")
	f.Add("+1,0x10")
	f.Fuzz(func(t *testing.T, s string) {
		got, err := parseConns("curve-conns", s)
		if err != nil {
			return
		}
		for i, n := range got {
			if n < 1 || n > 1000 || i > 0 && n <= got[i-1] {
				t.Errorf("parseConns(%q) = %v", s, got)
			}
		}
	})
}

// The report and the image of measured curves: a blocked scenario says
// why, a point without pgbench leaves a gap, and the image is valid XML
// naming every drawn scenario.
func TestCurvesReportAndImage(t *testing.T) {
	dir := t.TempDir()
	r := &runner{o: options{out: filepath.Join(dir, "RESULTS.md"), curvesSVG: filepath.Join(dir, "curves.svg"),
		curveConns: []int{1, 8}, curveDur: 3 * time.Second, curveWarmup: time.Second}}
	ours := func(rps, p99 float64) *bench.Result {
		return &bench.Result{Requests: uint64(rps * 3), OKPerSec: rps, Latency: bench.Latency{P50: p99 / 2, P99: p99}}
	}
	r.curves = []*curve{
		{sc: &curveScenario{unit: "reads/s", loadCmd: "loadgen -c <N> URL", script: "SELECT 1;\n", sql: "x.sql Q"},
			Key: "read10", Title: "Graph read", Short: "Read", Points: []curvePoint{
				{Connections: 1, Ours: ours(900, 2000), LoadgenShare: 0.05, GatewayCPU: 300,
					Ref: &bench.PgbenchResult{TPS: 9000, Command: "pgbench -n -M prepared -c 1 -j 1 -T 6 -l -f curve_read10.sql 'db'",
						Latency: &bench.Latency{P50: 100, P99: 400}}, PgbenchShare: 0.2},
				{Connections: 8, Ours: ours(3000, 9000), RefError: "pgbench: boom | bad"},
			}},
		{sc: &curveScenario{}, Key: "batch", Title: "Graph batch", Short: "Batch", Blocked: "the batch answered 400"},
	}
	md := r.curvesSection()
	for _, want := range []string{"![Throughput and p99 against connections, ours beside pgbench](curves.svg)",
		"| 1 | 900 | 1.00 ms | 2.00 ms | 0 | 300 µs | 5.0 % | 9,000 | 0.10 ms | 0.40 ms | 20.0 % | 10.0 % |",
		"| 8 | 3,000 |", "failed: pgbench: boom \\| bad", "`pgbench -n -M prepared -c <N> -j <min(2,N)> -T <T> -l -f curve_read10.sql 'db'`",
		"### Graph batch\n\nNot measured: the batch answered 400"} {
		if !strings.Contains(md, want) {
			t.Errorf("the curves section lacks %q:\n%s", want, md)
		}
	}
	if err := r.writeCurvesSVG(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(r.o.curvesSVG)
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	dec := xml.NewDecoder(bytes.NewReader(data))
	inText := false
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("curves.svg is not well-formed: %v", err)
		}
		switch el := tok.(type) {
		case xml.StartElement:
			inText = el.Name.Local == "text"
		case xml.EndElement:
			inText = false
		case xml.CharData:
			if inText {
				texts = append(texts, string(el))
			}
		}
	}
	all := strings.Join(texts, "\n")
	for _, want := range []string{"Read: throughput", "Read: p99", "ours", "pgbench, same SQL"} {
		if !strings.Contains(all, want) {
			t.Errorf("curves.svg lacks %q", want)
		}
	}
	if strings.Contains(all, "Batch") {
		t.Error("curves.svg draws the blocked scenario")
	}
}

// Every curve's pgbench script is built from the repository's current
// query files: a renamed query or a new parameter fails here, not in the
// middle of a bench run.
func TestEveryCurveScriptIsBuiltFromTheQueryFiles(t *testing.T) {
	t.Chdir("../../..")
	r := &runner{gw: &bench.Gateway{URL: "http://127.0.0.1:1"}, raw: map[string]any{}}
	r.creds.Page.ID, r.creds.App.ID = "100000000000003", "100000000000004"
	r.creds.Users = map[string]struct {
		ID       string `json:"id"`
		Username string `json:"username"`
		Password string `json:"password"`
	}{"owner": {ID: "100000000000000"}}
	for _, c := range r.curveScenarios() {
		if c.Blocked != "" {
			t.Errorf("curve %s is blocked: %s", c.Key, c.Blocked)
			continue
		}
		if strings.Contains(c.sc.script, "@") {
			t.Errorf("curve %s: a parameter is left unbound:\n%s", c.Key, c.sc.script)
		}
		if c.Key == "write" && (strings.Contains(c.sc.script, "book.posts") || strings.Contains(c.sc.script, "core.outbox")) {
			t.Errorf("the write reference touches the real tables:\n%s", c.sc.script)
		}
	}
}
