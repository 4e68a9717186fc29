package bench

import (
	"bufio"
	"bytes"
	"testing"
	"time"
)

// BenchmarkReadResponse measures the generator's own cost of parsing one
// keep-alive answer (status line, headers, 60-byte body) from memory: the
// client-side CPU per request apart from the syscalls.
//
//	go test -run '^$' -bench . ./bench/
func BenchmarkReadResponse(b *testing.B) {
	one := []byte("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nDate: Sun, 22 Nov 2026 02:00:00 GMT\r\n" +
		"Content-Length: 60\r\n\r\n" + string(TrivialBody))
	stream := bytes.Repeat(one, 1024)
	r := bytes.NewReader(stream)
	w := &worker{load: &Load{Method: "GET"}, br: bufio.NewReaderSize(r, 32<<10), samples: map[string]string{}}
	b.SetBytes(int64(len(one)))
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if i%1024 == 0 {
			r.Reset(stream)
			w.br.Reset(r)
		}
		if code, _, err := w.readResponse(); err != nil || code != 200 {
			b.Fatal(code, err)
		}
	}
}

// BenchmarkHistogramRecord measures recording one latency.
func BenchmarkHistogramRecord(b *testing.B) {
	var h Histogram
	d := 1234567 * time.Nanosecond
	for b.Loop() {
		h.Record(d)
		d += 7919
	}
}
