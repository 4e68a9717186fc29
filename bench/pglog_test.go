package bench

import (
	"math"
	"strings"
	"testing"
	"time"
)

func readLog(t *testing.T, log string) ([]PgbenchTx, uint64, uint64, error) {
	t.Helper()
	var txs []PgbenchTx
	done, failed, err := ReadPgbenchLog(strings.NewReader(log), func(tx PgbenchTx) { txs = append(txs, tx) })
	return txs, done, failed, err
}

func TestPgbenchLogGivesEachTransactionWithItsEnd(t *testing.T) {
	log := "0 0 1200 0 1700000000 123456\n" +
		"1 0 800 0 1700000000 123999\n" +
		"0 1 skipped 0 1700000001 000100\n" +
		"1 1 failed 0 1700000001 000200 0 3\n" +
		"\n" +
		"0 2 5000 0 1700000001 000300 17\n"
	txs, done, failed, err := readLog(t, log)
	if err != nil {
		t.Fatal(err)
	}
	if done != 3 || failed != 2 || len(txs) != 5 {
		t.Fatalf("done %d, failed %d, %d transactions; want 3, 2, 5", done, failed, len(txs))
	}
	want := PgbenchTx{End: 1700000000_123456, Latency: 1200 * time.Microsecond}
	if txs[0] != want {
		t.Errorf("first transaction %+v, want %+v", txs[0], want)
	}
	if !txs[2].Failed || txs[2].End != 1700000001_000100 {
		t.Errorf("skipped transaction read as %+v", txs[2])
	}
}

func TestPgbenchLogRefusesALineOfAnotherShape(t *testing.T) {
	for _, bad := range []string{
		"0 0 1200 0 1700000000\n",        // too few fields
		"0 0 12.5 0 1700000000 123456\n", // not µs
		"x 0 1200 0 1700000000 123456\n", // client id
		"0 0 -3 0 1700000000 123456\n",   // negative
		"0 0 1200 0 1700000000 1000000\n",
		"0 0 99999999999999999999 0 1 1\n",
		"0 0 5000000 0 1 1\n", // began before the epoch
	} {
		txs, _, _, err := readLog(t, bad)
		if err == nil || !strings.Contains(err.Error(), "line 1") {
			t.Errorf("%q: err %v, want one naming line 1", bad, err)
		}
		if len(txs) != 0 {
			t.Errorf("%q: gave %d transactions", bad, len(txs))
		}
	}
}

// A run's first seconds are its clients connecting: the window keeps only
// the transactions that ended in the last seconds, and counts its rate over
// exactly that period.
func TestPgbenchWindowKeepsTheRunsSteadyEnd(t *testing.T) {
	var txs []PgbenchTx
	base := int64(1_700_000_000_000_000)
	// 2 s of nothing (connections), then 1 slow transaction, then 1,000
	// per second of 1 ms each for 3 s.
	txs = append(txs, PgbenchTx{End: base + 2_100_000, Latency: 100 * time.Millisecond})
	for i := range 3000 {
		txs = append(txs, PgbenchTx{End: base + 2_200_000 + int64(i)*1000, Latency: time.Millisecond})
	}
	txs = append(txs, PgbenchTx{End: base + 4_000_000, Failed: true})
	w := summarizeWindow(txs, 2*time.Second)
	if w == nil {
		t.Fatal("no window")
	}
	if math.Abs(w.Seconds-2) > 1e-9 || math.Abs(w.TPS-1000) > 1 || w.Failed != 1 {
		t.Errorf("window %+v, want 2 s at 1,000 tps with 1 failure", w)
	}
	if w.Latency.Max != 1000 {
		t.Errorf("the slow first transaction is in the window: max %v µs", w.Latency.Max)
	}
	all := summarizeWindow(txs, 0)
	if all.Latency.Max != 100_000 || math.Abs(all.Seconds-3.199) > 1e-6 {
		t.Errorf("whole run %+v: want every transaction, from the first one's start", all)
	}
	// A run whose connections took nearly all of it: the window is what
	// there is, and says so.
	short := summarizeWindow(txs[:11], 2*time.Second)
	if short == nil || short.Seconds >= 1 {
		t.Errorf("short run window %+v, want under 1 s", short)
	}
	if summarizeWindow([]PgbenchTx{{End: 5, Failed: true}}, time.Second) != nil {
		t.Error("a window without a completed transaction")
	}
}

func FuzzPgbenchLog(f *testing.F) {
	f.Add("0 0 1200 0 1700000000 123456\n1 0 skipped 0 1 2\n")
	f.Add("0 0 9223372036854775807 0 1 1\n")
	f.Add("0 0 1 0 1 1 2 3 4\n\n\n")
	f.Fuzz(func(t *testing.T, log string) {
		var txs []PgbenchTx
		done, failed, err := ReadPgbenchLog(strings.NewReader(log), func(tx PgbenchTx) { txs = append(txs, tx) })
		if uint64(len(txs)) != done+failed {
			t.Errorf("done %d + failed %d but %d transactions", done, failed, len(txs))
		}
		lines := uint64(strings.Count(log, "\n") + 1)
		if err == nil && done+failed > lines {
			t.Errorf("%d transactions from %d lines", done+failed, lines)
		}
		for _, tx := range txs {
			if tx.End < 0 || tx.Latency < 0 || tx.Latency.Microseconds() > tx.End {
				t.Errorf("transaction %+v", tx)
			}
		}
		for _, win := range []time.Duration{0, time.Second} {
			w := summarizeWindow(txs, win)
			if w == nil {
				continue
			}
			if w.Seconds < 0 || w.TPS < 0 || math.IsNaN(w.TPS) || w.Latency.P99 < 0 {
				t.Errorf("window %v: %+v", win, w)
			}
		}
	})
}
