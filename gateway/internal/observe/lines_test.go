package observe

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// lockedBuffer is a writer tests read while a LineWriter's timer writes.
type lockedBuffer struct {
	mu     sync.Mutex
	b      bytes.Buffer
	writes int
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.writes++
	return l.b.Write(p)
}

func (l *lockedBuffer) read() (string, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String(), l.writes
}

func TestLineWriterHoldsLinesThenWritesThemTogetherInOrder(t *testing.T) {
	t.Parallel()
	var out lockedBuffer
	l := NewLineWriter(&out, time.Hour) // only Flush writes
	for i := range 3 {
		if n, err := fmt.Fprintf(l, "line %d\n", i); err != nil || n != 7 {
			t.Fatalf("write: %d %v", n, err)
		}
	}
	if got, _ := out.read(); got != "" {
		t.Fatalf("written before the flush: %q", got)
	}
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	if got, writes := out.read(); got != "line 0\nline 1\nline 2\n" || writes != 1 {
		t.Fatalf("after the flush: %q in %d writes", got, writes)
	}
}

func TestLineWriterWritesHeldLinesAfterItsDelay(t *testing.T) {
	t.Parallel()
	var out lockedBuffer
	l := NewLineWriter(&out, time.Millisecond)
	_, _ = l.Write([]byte("soon\n"))
	// No flush is called: the timer writes the line.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		if got, _ := out.read(); got == "soon\n" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the held line was never written")
		}
	}
}

func TestLineWriterWritesAtOnceWhenFull(t *testing.T) {
	t.Parallel()
	var out lockedBuffer
	l := NewLineWriter(&out, time.Hour)
	line := strings.Repeat("x", 1023) + "\n"
	for range LineWriterSize / len(line) {
		_, _ = l.Write([]byte(line))
	}
	if got, writes := out.read(); len(got) != LineWriterSize || writes != 1 {
		t.Fatalf("%d bytes in %d writes once full, want %d in 1", len(got), writes, LineWriterSize)
	}
}

func TestLineWriterLosesNoLineAtClose(t *testing.T) {
	t.Parallel()
	var out lockedBuffer
	l := NewLineWriter(&out, time.Hour)
	_, _ = l.Write([]byte("held\n"))
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	_, _ = l.Write([]byte("after\n"))
	if got, _ := out.read(); got != "held\nafter\n" {
		t.Fatalf("got %q", got)
	}
}

func TestLineWriterKeepsConcurrentLinesWhole(t *testing.T) {
	t.Parallel()
	var out lockedBuffer
	l := NewLineWriter(&out, time.Microsecond)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 500 {
				_, _ = fmt.Fprintf(l, "g%d i%03d %s\n", g, i, strings.Repeat("y", 100))
			}
		})
	}
	wg.Wait()
	_ = l.Close()
	got, _ := out.read()
	lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
	if len(lines) != 8*500 {
		t.Fatalf("%d lines, want %d", len(lines), 8*500)
	}
	last := map[string]string{}
	for _, line := range lines {
		var g, i string
		if _, err := fmt.Sscanf(line, "%s %s", &g, &i); err != nil || len(line) != len("g0 i000 ")+100 {
			t.Fatalf("broken line %q", line)
		}
		if i <= last[g] && last[g] != "" {
			t.Fatalf("%s: %s after %s", g, i, last[g])
		}
		last[g] = i
	}
}
