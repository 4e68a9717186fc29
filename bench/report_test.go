package bench

import (
	"strings"
	"testing"
)

func TestMarkdownTable(t *testing.T) {
	r := Report{Title: "T", Env: [][2]string{{"cpu", "x"}}, Rows: []Row{{What: "a|b", Ours: "1", Reference: "2",
		Ratio: Pct(0.5), Target: "≥ 35 %", Verdict: Verdict(true, true), Command: "pgbench -f x.sql\nnext"}}}
	md := r.Markdown()
	for _, want := range []string{"# T", "| cpu | x |", "| 1 | a\\|b | 1 | 2 | 50.0 % | ≥ 35 % | met | `pgbench -f x.sql<br>next` |"} {
		if !strings.Contains(md, want) {
			t.Errorf("missing %q in\n%s", want, md)
		}
	}
}

func TestNum(t *testing.T) {
	for in, want := range map[float64]string{0: "0", 999: "999", 1000: "1,000", 1234567.4: "1,234,567", -4200: "-4,200"} {
		if got := Num(in); got != want {
			t.Errorf("Num(%v) = %q, want %q", in, got, want)
		}
	}
}

func TestPgbenchParsing(t *testing.T) {
	out := `transaction type: read.sql
number of transactions actually processed: 182270
number of failed transactions: 0 (0.000%)
latency average = 3.511 ms
initial connection time = 61.406 ms
tps = 18227.466195 (without initial connection time)
`
	if m := reTPS.FindStringSubmatch(out); m == nil || m[1] != "18227.466195" {
		t.Errorf("tps: %v", m)
	}
	if m := reLatency.FindStringSubmatch(out); m == nil || m[1] != "3.511" {
		t.Errorf("latency: %v", m)
	}
	if m := reProcessed.FindStringSubmatch(out); m == nil || m[1] != "182270" {
		t.Errorf("processed: %v", m)
	}
	if got := LibpqURL("postgres://u:p@h/db?pool_max_conns=4&sslmode=disable"); got != "postgres://u:p@h/db?sslmode=disable" {
		t.Errorf("LibpqURL: %s", got)
	}
	if got := Redacted("postgres://u:secret@h/db"); strings.Contains(got, "secret") {
		t.Errorf("Redacted: %s", got)
	}
}
