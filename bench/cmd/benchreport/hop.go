package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/svcplatform/svc/bench"
)

// hopCalls is each hop benchmark's call count (-benchtime Nx), and
// hopCount how many times each runs (-count): the median is the figure.
const (
	hopCalls = 30000
	hopCount = 3
)

// hopBench is one BenchmarkHop line: its name without the GOMAXPROCS
// suffix and its metrics by unit (ns/op, cpu-µs/op, p50-µs, p99-µs).
type hopBench struct {
	name    string
	metrics map[string]float64
}

// parseBenchLines reads the result lines of `go test -bench` output.
func parseBenchLines(out string) []hopBench {
	var res []hopBench
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") || len(f)%2 != 0 {
			continue
		}
		name := f[0]
		if i := strings.LastIndexByte(name, '-'); i > 0 {
			if _, err := strconv.Atoi(name[i+1:]); err == nil {
				name = name[:i]
			}
		}
		b := hopBench{name: name, metrics: map[string]float64{}}
		for i := 2; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				continue
			}
			b.metrics[f[i+1]] = v
		}
		res = append(res, b)
	}
	return res
}

// medianMetric is the median of unit over the lines named name (0 when
// none has it).
func medianMetric(lines []hopBench, name, unit string) float64 {
	var vs []float64
	for _, l := range lines {
		if v, ok := l.metrics[unit]; ok && l.name == name {
			vs = append(vs, v)
		}
	}
	if len(vs) == 0 {
		return 0
	}
	slices.Sort(vs)
	return vs[len(vs)/2]
}

// pluginHop runs BenchmarkHop of gateway/internal/host (the Echo handler of
// internal/testplugin in-process, then through the host to the plugin
// process over the fast lane the gateway uses) and reports what the hop
// adds: CPU per call of both processes together, and p50, sequential
// calls; the CPU at 8 callers in the details.
func (r *runner) pluginHop(ctx context.Context) {
	const pattern = "^BenchmarkHop$/^(in-process|fast-lane)$/"
	row := bench.Row{What: "Plugin hop (gateway → plugin → gateway), CPU and p50 added over in-process",
		Reference: "the same Echo handler in-process (decode, handler, encode, as the SDK runs it), same benchmark",
		Target:    "≤ 30 µs CPU, ≤ 40 µs p50",
		Command: fmt.Sprintf("SVC_BIN_DIR=bin go test -run '^$' -bench '%s' -benchtime %dx -count %d ./gateway/internal/host/",
			pattern, hopCalls, hopCount)}
	if _, err := os.Stat(filepath.Join("gateway", "internal", "host")); err != nil {
		row.Verdict = "not run: benchreport runs from the repository root (go test needs the sources)"
		r.add(row)
		return
	}
	// Compiled first, so that the compiler's CPU is not the benchmark's.
	testBin := filepath.Join(r.o.work, "host.test")
	if out, err := exec.CommandContext(ctx, "go", "test", "-c", "-o", testBin, "./gateway/internal/host/").CombinedOutput(); err != nil {
		row.Verdict = "failed: go test -c: " + firstLine(err.Error()+" "+string(out))
		r.add(row)
		return
	}
	cmd := exec.CommandContext(ctx, testBin, "-test.run", "^$", "-test.bench", pattern,
		"-test.benchtime", fmt.Sprintf("%dx", hopCalls), "-test.count", strconv.Itoa(hopCount))
	cmd.Dir = filepath.Join("gateway", "internal", "host")
	// The plugin is bin/testplugin (make build), as the tests take it.
	cmd.Env = append(os.Environ(), "SVC_BIN_DIR="+r.o.bin)
	start := time.Now()
	out, err := cmd.CombinedOutput()
	if err != nil {
		row.Verdict = "failed: " + firstLine(err.Error()+" "+string(out))
		r.add(row)
		return
	}
	lines := parseBenchLines(string(out))
	type fig struct {
		CPU float64 `json:"cpu_us"`
		P50 float64 `json:"p50_us"`
		P99 float64 `json:"p99_us"`
	}
	get := func(name string) fig {
		name = "BenchmarkHop/" + name
		return fig{medianMetric(lines, name, "cpu-µs/op"), medianMetric(lines, name, "p50-µs"), medianMetric(lines, name, "p99-µs")}
	}
	in1, lane1 := get("in-process/callers=1"), get("fast-lane/callers=1")
	in8, lane8 := get("in-process/callers=8"), get("fast-lane/callers=8")
	if lane1.CPU == 0 || lane1.P50 == 0 || in1.P50 == 0 {
		row.Verdict = "failed: no cpu-µs/op or p50-µs in the benchmark's output"
		r.add(row)
		return
	}
	cpuAdded, p50Added := lane1.CPU-in1.CPU, lane1.P50-in1.P50
	r.raw["plugin_hop"] = map[string]any{"calls": hopCalls, "count": hopCount,
		"in_process_1": in1, "fast_lane_1": lane1, "in_process_8": in8, "fast_lane_8": lane8,
		"cpu_added_us": cpuAdded, "p50_added_us": p50Added}
	row.Ours = fmt.Sprintf("+%.1f µs CPU, +%.1f µs p50 per call, sequential (through the plugin %.1f µs CPU, p50 %.1f µs, p99 %.1f µs; in-process %.1f µs CPU, p50 %.1f µs)",
		cpuAdded, p50Added, lane1.CPU, lane1.P50, lane1.P99, in1.CPU, in1.P50)
	row.Verdict = bench.Verdict(true, cpuAdded <= 30 && p50Added <= 40)
	r.add(row)
	r.details = append(r.details, fmt.Sprintf("**Plugin hop** — BenchmarkHop, fast lane (the gateway's transport) against the Echo handler in-process, "+
		"%d calls × %d runs each (medians), CPU of both processes per call: sequential +%.1f µs CPU, +%.1f µs p50 (p99 %.1f against %.1f µs); "+
		"8 callers: through the plugin %.1f µs CPU, p50 %.1f µs, in-process %.1f µs CPU, p50 %.1f µs (+%.1f µs CPU). The benchmark ran %.0f s.",
		hopCalls, hopCount, cpuAdded, p50Added, lane1.P99, in1.P99, lane8.CPU, lane8.P50, in8.CPU, in8.P50, lane8.CPU-in8.CPU, time.Since(start).Seconds()))
}
