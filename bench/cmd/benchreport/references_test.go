package main

import "testing"

func TestTheSendReferenceNeedsConsecutiveRecipientIDs(t *testing.T) {
	first, last, err := idRange([]string{"100000000000065", "100000000000066", "100000000000067"})
	if err != nil || first != 100000000000065 || last != 100000000000067 {
		t.Errorf("idRange of three consecutive ids = %d, %d, %v; want 100000000000065, 100000000000067, nil", first, last, err)
	}
	for _, ids := range [][]string{
		{"100000000000065", "100000000000067"}, // a gap: pgbench's random range would name a user with no conversation
		{"100000000000066", "100000000000065"},
		{"100000000000065", "x"},
		{},
	} {
		if _, _, err := idRange(ids); err == nil {
			t.Errorf("idRange(%q) accepted ids pgbench cannot draw from a range", ids)
		}
	}
}

func TestWrksReportIsReadForItsRateTailAndRefusals(t *testing.T) {
	out := `Running 10s test @ http://127.0.0.1:41915/api/v1/graph?node=page/1/posts&limit=10
  2 threads and 64 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency     7.01ms    3.12ms  45.20ms   71.20%
    Req/Sec     4.61k   312.41     5.40k    70.50%
  Latency Distribution
     50%    6.44ms
     75%    8.51ms
     90%   11.02ms
     99%   17.96ms
  91744 requests in 10.01s, 170.71MB read
  Non-2xx or 3xx responses: 12
Requests/sec:   9165.63
Transfer/sec:     17.05MB
`
	w := parseWrkReport(out)
	if w.rps != 9165.63 || w.p50 != 6440 || w.p99 != 17960 || w.non2xx != 12 {
		t.Errorf("parseWrkReport = %+v; want 9165.63 req/s, p50 6440 µs, p99 17960 µs, 12 refusals", w)
	}
	for in, want := range map[string]float64{"635.91us": 635.91, "1.5ms": 1500, "2.00s": 2e6, "1.00m": 60e6} {
		if got, ok := wrkDuration(in); !ok || got != want {
			t.Errorf("wrkDuration(%q) = %v, %v; want %v", in, got, ok, want)
		}
	}
	if _, ok := wrkDuration("fast"); ok {
		t.Error("wrkDuration read a duration without a unit")
	}
}
