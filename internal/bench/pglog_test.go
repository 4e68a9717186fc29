package bench

import (
	"strings"
	"testing"
	"time"
)

func TestPgbenchLogRecordsEachCompletedTransaction(t *testing.T) {
	log := "0 0 1200 0 1700000000 123456\n" +
		"1 0 800 0 1700000000 123999\n" +
		"0 1 skipped 0 1700000001 000100\n" +
		"1 1 failed 0 1700000001 000200 0 3\n" +
		"\n" +
		"0 2 5000 0 1700000001 000300 17\n"
	var h Histogram
	done, failed, err := ReadPgbenchLog(strings.NewReader(log), &h)
	if err != nil {
		t.Fatal(err)
	}
	if done != 3 || failed != 2 || h.Count() != 3 {
		t.Fatalf("done %d, failed %d, recorded %d; want 3, 2, 3", done, failed, h.Count())
	}
	if h.Min() != 800*time.Microsecond || h.Max() != 5*time.Millisecond {
		t.Errorf("min %v, max %v; want 800µs, 5ms", h.Min(), h.Max())
	}
}

func TestPgbenchLogRefusesALineOfAnotherShape(t *testing.T) {
	for _, bad := range []string{
		"0 0 1200 0 1700000000\n",        // too few fields
		"0 0 12.5 0 1700000000 123456\n", // not µs
		"x 0 1200 0 1700000000 123456\n", // client id
		"0 0 -3 0 1700000000 123456\n",   // negative
		"0 0 99999999999999999999 0 1 1\n",
	} {
		var h Histogram
		if _, _, err := ReadPgbenchLog(strings.NewReader(bad), &h); err == nil || !strings.Contains(err.Error(), "line 1") {
			t.Errorf("%q: err %v, want one naming line 1", bad, err)
		}
		if h.Count() != 0 {
			t.Errorf("%q: recorded %d samples", bad, h.Count())
		}
	}
}

func FuzzPgbenchLog(f *testing.F) {
	f.Add("0 0 1200 0 1700000000 123456\n1 0 skipped 0 1 2\n")
	f.Add("0 0 9223372036854775807 0 1 1\n")
	f.Add("0 0 1 0 1 1 2 3 4\n\n\n")
	f.Fuzz(func(t *testing.T, log string) {
		var h Histogram
		done, failed, err := ReadPgbenchLog(strings.NewReader(log), &h)
		if h.Count() != done {
			t.Errorf("done %d but %d recorded", done, h.Count())
		}
		lines := uint64(strings.Count(log, "\n") + 1)
		if err == nil && done+failed > lines {
			t.Errorf("%d transactions from %d lines", done+failed, lines)
		}
		if done > 0 && h.Quantile(0.99) < 0 {
			t.Errorf("negative p99")
		}
	})
}
