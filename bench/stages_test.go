package bench

import (
	"bytes"
	"crypto/sha256"
	"regexp"
	"runtime/pprof"
	"strings"
	"syscall"
	"testing"
	"time"
)

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

//go:noinline
func burnHashing(until time.Time) (n int) {
	var sum [32]byte
	for time.Now().Before(until) {
		for range 200 {
			sum = sha256.Sum256(sum[:])
		}
		n++
	}
	return n
}

func TestCPUSamplesGoToTheInnermostMatchingStage(t *testing.T) {
	// Not parallel: one CPU profile per process at a time.
	var buf bytes.Buffer
	if err := pprof.StartCPUProfile(&buf); err != nil {
		t.Skipf("a CPU profile is already running: %v", err)
	}
	// 300 ms of CPU, however busy the machine is (10 s at most).
	start, deadline := cpuTime(), time.Now().Add(10*time.Second)
	for cpuTime()-start < 300*time.Millisecond && time.Now().Before(deadline) {
		burnHashing(time.Now().Add(50 * time.Millisecond))
	}
	pprof.StopCPUProfile()
	stages := []Stage{
		{"outer", regexp.MustCompile(`burnHashing`)},
		{"hashing", regexp.MustCompile(`^crypto/`)},
	}
	cpu, err := Stages(buf.Bytes(), stages)
	if err != nil {
		t.Fatal(err)
	}
	if len(cpu) != 3 || cpu[0].Stage != "outer" || cpu[1].Stage != "hashing" || cpu[2].Stage != "rest" {
		t.Fatalf("stages = %+v", cpu)
	}
	// sha256 is called by burnHashing, so its samples are "hashing" (the
	// innermost match), and the loop's own are "outer".
	if cpu[1].Seconds <= cpu[0].Seconds || cpu[1].Seconds < 0.05 {
		t.Fatalf("hashing %.3fs, outer %.3fs: the innermost stage should have most of 0.3 s", cpu[1].Seconds, cpu[0].Seconds)
	}
	table := StageTable(cpu, 1000)
	if !strings.Contains(table, "| hashing | ") || !strings.Contains(table, "**total**") {
		t.Fatalf("table:\n%s", table)
	}
}

func TestANonProfileIsRefused(t *testing.T) {
	t.Parallel()
	for _, raw := range [][]byte{[]byte("not a profile"), {0x1f, 0x8b, 1}, {}} {
		if _, err := Stages(raw, GatewayStages); err == nil {
			t.Errorf("%q was taken for a CPU profile", raw)
		}
	}
}

func FuzzParseProfile(f *testing.F) {
	f.Add([]byte{0x0a, 0x04, 0x08, 0x01, 0x10, 0x02})
	f.Add([]byte{0x12, 0x04, 0x0a, 0x02, 0x01, 0x02})
	f.Fuzz(func(t *testing.T, raw []byte) {
		_, _ = Stages(raw, PluginStages) // must not panic
	})
}
