package main

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// events reads every event's data from s, delivered one byte at a time.
func events(t *testing.T, s string) ([]string, error) {
	t.Helper()
	r := newSSEReader(iotest.OneByteReader(strings.NewReader(s)))
	var out []string
	for {
		ev, err := r.Next()
		if err != nil {
			return out, err
		}
		out = append(out, string(ev))
	}
}

func TestSSEReader(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		rule string
		in   string
		want []string
		err  error
	}{
		{"events end with a blank line", "data: a\n\ndata: b\n\n", []string{"a", "b"}, io.EOF},
		{"CRLF and CR line ends count like LF", "data: a\r\n\r\ndata: b\r\rdata: c\n\n", []string{"a", "b", "c"}, io.EOF},
		{"data lines of one event are joined with LF", "data: a\ndata: b\n\n", []string{"a\nb"}, io.EOF},
		{"comments and other fields are skipped", ": keep-alive\n\nevent: x\nid: 1\nretry: 5\ndata: a\n\n", []string{"a"}, io.EOF},
		{"the space after the colon is optional", "data:a\n\ndata:  b\n\n", []string{"a", " b"}, io.EOF},
		{"a stream cut inside an event is unexpected", "data: a\n\ndata: {\"id\":", []string{"a"}, io.ErrUnexpectedEOF},
		{"a stream cut after data but before the blank line is unexpected", "data: a\n", nil, io.ErrUnexpectedEOF},
		{"an empty stream has no event", "", nil, io.EOF},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			got, err := events(t, tc.in)
			if !errors.Is(err, tc.err) || strings.Join(got, "|") != strings.Join(tc.want, "|") {
				t.Fatalf("got %q, %v; want %q, %v", got, err, tc.want, tc.err)
			}
		})
	}
}

func TestSSEReaderRefusesAnEndlessEvent(t *testing.T) {
	t.Parallel()
	_, err := events(t, "data: "+strings.Repeat("x", maxEventBytes+10)+"\n\n")
	if !errors.Is(err, errEventTooLarge) {
		t.Fatalf("got %v", err)
	}
}

// FuzzSSEReader checks that any input ends in EOF, an unexpected EOF or a
// too-large event, never a hang or a panic, and that reading it one byte
// at a time gives the same events as reading it whole.
func FuzzSSEReader(f *testing.F) {
	for _, s := range []string{"data: a\n\n", "data: a\r\n\r\ndata: [DONE]\r\n\r\n", ": c\n\ndata:x\ndata:y\n\n", "data: a\r", "\r\n\n\r"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		whole := newSSEReader(strings.NewReader(s))
		var a []string
		var errA error
		for {
			ev, err := whole.Next()
			if err != nil {
				errA = err
				break
			}
			a = append(a, string(ev))
		}
		b, errB := events(t, s)
		if strings.Join(a, "\x00") != strings.Join(b, "\x00") || !errors.Is(errA, errB) {
			t.Fatalf("whole %q %v, byte by byte %q %v", a, errA, b, errB)
		}
		if !errors.Is(errA, io.EOF) && !errors.Is(errA, io.ErrUnexpectedEOF) && !errors.Is(errA, errEventTooLarge) {
			t.Fatalf("error %v", errA)
		}
	})
}
