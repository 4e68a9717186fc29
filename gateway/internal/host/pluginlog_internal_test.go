package host

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
)

func TestAPluginsStderrLinesAreLoggedAtTheirLevelWithTheirAttributes(t *testing.T) {
	var out, tail bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&out, &slog.HandlerOptions{Level: slog.LevelInfo}))
	forwardStderr(log, strings.NewReader(
		`{"@level":"warn","@message":"slow upstream","@timestamp":"2026-11-27T20:00:00Z","trace_id":"T1","ms":812}`+"\n"+
			`{"@level":"debug","@message":"not shown at info"}`+"\n"+
			"panic: not JSON\n"), &tail)

	var lines []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("gateway log line %q: %v", l, err)
		}
		lines = append(lines, m)
	}
	if len(lines) != 1 {
		t.Fatalf("logged %d lines at info, want only the warning: %v", len(lines), lines)
	}
	if l := lines[0]; l["level"] != "WARN" || l["msg"] != "slow upstream" || l["trace_id"] != "T1" || l["ms"] != float64(812) || l["@timestamp"] != nil {
		t.Errorf("logged %v", l)
	}
	if !strings.Contains(tail.String(), "panic: not JSON") {
		t.Errorf("the stderr tail lacks the last line: %q", tail.String())
	}
}
