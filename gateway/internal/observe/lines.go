package observe

import (
	"io"
	"sync"
	"time"
)

// LineWriter gathers whole log lines (each Write is one, as slog's handlers
// write them) and writes them to w together: at most Delay after the first
// line it holds, at once when it holds LineWriterSize bytes, and at Close.
// It is the access log's writer: one write(2) per request was, at one
// request in flight, about a tenth of the gateway's CPU per chat
// completion; gathered, a burst of lines costs one write. Lines keep their
// order; a line may reach w up to Delay after lines written since to w by
// other writers. After Close, lines go to w at once, so none is lost on a
// clean stop.
type LineWriter struct {
	w     io.Writer
	delay time.Duration
	timer *time.Timer

	// wmu orders the writes to w, and guards spare.
	wmu   sync.Mutex
	spare []byte

	mu     sync.Mutex // guards what follows
	buf    []byte
	armed  bool // the timer will flush buf
	closed bool
}

// LineWriterSize is how many bytes a LineWriter holds before it writes
// them without waiting for its timer.
const LineWriterSize = 32 << 10

// NewLineWriter returns a LineWriter over w that holds lines at most delay.
func NewLineWriter(w io.Writer, delay time.Duration) *LineWriter {
	l := &LineWriter{w: w, delay: delay}
	l.timer = time.AfterFunc(time.Hour, func() { _ = l.Flush() })
	l.timer.Stop()
	return l
}

// Write holds p, one whole line. Errors writing to w are the next Flush's
// (slog ignores a handler's write errors anyway).
func (l *LineWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		l.wmu.Lock()
		defer l.wmu.Unlock()
		return l.w.Write(p)
	}
	l.buf = append(l.buf, p...)
	full := len(l.buf) >= LineWriterSize
	if !full && !l.armed {
		l.armed = true
		l.timer.Reset(l.delay)
	}
	l.mu.Unlock()
	if full {
		if err := l.Flush(); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

// Flush writes the lines held.
func (l *LineWriter) Flush() error {
	l.wmu.Lock()
	defer l.wmu.Unlock()
	l.mu.Lock()
	out := l.buf
	l.buf, l.spare = l.spare[:0], nil
	l.armed = false // a timer already running flushes nothing, harmlessly
	l.mu.Unlock()
	if len(out) == 0 {
		l.spare = out
		return nil
	}
	_, err := l.w.Write(out)
	if cap(out) <= 2*LineWriterSize { // a rare burst's buffer is not kept
		l.spare = out[:0]
	}
	return err
}

// Close writes the lines held; later lines are written at once.
func (l *LineWriter) Close() error {
	l.mu.Lock()
	l.closed = true
	l.mu.Unlock()
	l.timer.Stop()
	return l.Flush()
}
