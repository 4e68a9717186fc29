package main

import "testing"

// The hop row is read from go test's own lines: the metrics by unit, the
// GOMAXPROCS suffix dropped, and the median of the -count runs.
func TestHopFiguresAreTheMedianOfGoTestBenchLines(t *testing.T) {
	out := `goos: linux
BenchmarkHop/in-process/callers=1-2         	   30000	      9000 ns/op	         8.0 cpu-µs/op	         7.0 p50-µs	        20.0 p99-µs
BenchmarkHop/in-process/callers=1-2         	   30000	      9000 ns/op	         9.0 cpu-µs/op	         6.0 p50-µs	        20.0 p99-µs
BenchmarkHop/in-process/callers=1-2         	   30000	      9000 ns/op	        30.0 cpu-µs/op	         5.0 p50-µs	        20.0 p99-µs
BenchmarkHop/fast-lane/callers=1-2          	   30000	     60000 ns/op	        40.0 cpu-µs/op	        50.0 p50-µs	       120.0 p99-µs
PASS
`
	lines := parseBenchLines(out)
	if len(lines) != 4 {
		t.Fatalf("%d lines parsed, want 4: %+v", len(lines), lines)
	}
	if got := medianMetric(lines, "BenchmarkHop/in-process/callers=1", "cpu-µs/op"); got != 9 {
		t.Errorf("median in-process CPU = %v, want 9", got)
	}
	if got := medianMetric(lines, "BenchmarkHop/in-process/callers=1", "p50-µs"); got != 6 {
		t.Errorf("median in-process p50 = %v, want 6", got)
	}
	if got := medianMetric(lines, "BenchmarkHop/fast-lane/callers=1", "ns/op"); got != 60000 {
		t.Errorf("fast lane ns/op = %v, want 60000", got)
	}
	if got := medianMetric(lines, "BenchmarkHop/fast-lane/callers=8", "p50-µs"); got != 0 {
		t.Errorf("a benchmark not run has figure %v, want 0", got)
	}
}
