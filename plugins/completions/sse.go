package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync"
)

// maxEventBytes bounds one server-sent event from an upstream; a longer one
// is a broken stream, not a reason to grow without end.
const maxEventBytes = 1 << 20

// errEventTooLarge: an upstream event exceeded maxEventBytes.
var errEventTooLarge = errors.New("server-sent event larger than 1 MiB")

// sseReader reads the data of server-sent events (the WHATWG event stream
// format) from an upstream body, wherever its chunk boundaries fall: lines
// end with LF, CRLF or CR; "data:" lines of one event are joined with LF;
// comments and other fields are skipped; a blank line ends an event.
type sseReader struct {
	r    *bufio.Reader
	data bytes.Buffer
	// lastCR: the previous line ended with CR, so an LF right after it is
	// that line's CRLF, not an empty line.
	lastCR  bool
	lineBuf []byte
}

// sseReaders are the readers of streams in progress, with their read
// buffers: each stream's goes back at its end (release), so that a stream
// allocates none (a 16 KiB buffer each was two thirds of the bytes a
// streamed completion allocated in the plugin).
var sseReaders = sync.Pool{New: func() any { return &sseReader{r: bufio.NewReaderSize(nil, sseBufferSize)} }}

// sseBufferSize is a stream's read buffer: events already received are
// read from it together (ready).
const sseBufferSize = 16 << 10

// sseKeep bounds the event and line buffers a released reader keeps: a
// rare large event's are left to the collector.
const sseKeep = 64 << 10

func newSSEReader(r io.Reader) *sseReader {
	s := sseReaders.Get().(*sseReader)
	s.r.Reset(r)
	return s
}

// release hands s back for another stream. Neither s nor an event it
// returned may be used after.
func (s *sseReader) release() {
	s.r.Reset(nil)
	s.data.Reset()
	s.lastCR = false
	s.lineBuf = s.lineBuf[:0]
	if s.data.Cap() > sseKeep || cap(s.lineBuf) > sseKeep {
		return
	}
	sseReaders.Put(s)
}

// Next returns the data of the next event that has any. At the end of the
// stream it returns io.EOF, or io.ErrUnexpectedEOF when the stream stopped
// in the middle of an event. The slice is valid until the next call.
func (s *sseReader) Next() ([]byte, error) {
	s.data.Reset()
	hasData := false
	for {
		line, err := s.line()
		if err != nil {
			if errors.Is(err, io.EOF) && (hasData || len(line) > 0) {
				return nil, io.ErrUnexpectedEOF
			}
			return nil, err
		}
		if len(line) == 0 {
			if hasData {
				return s.data.Bytes(), nil
			}
			continue
		}
		if line[0] == ':' {
			continue // a comment, e.g. a keep-alive
		}
		field, value, found := bytes.Cut(line, []byte(":"))
		if found && len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
		if string(field) != "data" {
			continue // event, id, retry: not used by OpenAI streams
		}
		if hasData {
			s.data.WriteByte('\n')
		}
		if s.data.Len()+len(value) > maxEventBytes {
			return nil, errEventTooLarge
		}
		s.data.Write(value)
		hasData = true
	}
}

// line reads one line without its terminator. At the end of the stream it
// returns what is left with io.EOF. It scans the buffered bytes for the
// line's end instead of reading byte by byte, and reuses one buffer: the
// line is valid until the next call.
func (s *sseReader) line() ([]byte, error) {
	s.lineBuf = s.lineBuf[:0]
	for {
		if s.r.Buffered() == 0 {
			if _, err := s.r.Peek(1); err != nil {
				return s.lineBuf, err
			}
		}
		buf, _ := s.r.Peek(s.r.Buffered())
		if s.lastCR {
			s.lastCR = false
			if buf[0] == '\n' && len(s.lineBuf) == 0 {
				_, _ = s.r.Discard(1) // the LF of a CRLF
				continue
			}
		}
		i := bytes.IndexAny(buf, "\r\n")
		if i < 0 {
			if len(s.lineBuf)+len(buf) > maxEventBytes {
				return nil, fmt.Errorf("reading an event line: %w", errEventTooLarge)
			}
			s.lineBuf = append(s.lineBuf, buf...)
			_, _ = s.r.Discard(len(buf))
			continue
		}
		if len(s.lineBuf)+i > maxEventBytes {
			return nil, fmt.Errorf("reading an event line: %w", errEventTooLarge)
		}
		s.lineBuf = append(s.lineBuf, buf[:i]...)
		s.lastCR = buf[i] == '\r'
		_, _ = s.r.Discard(i + 1)
		return s.lineBuf, nil
	}
}

// ready tells whether a whole next event is already buffered, so that a
// caller forwarding events may wait for it and send both at once.
func (s *sseReader) ready() bool {
	b, _ := s.r.Peek(s.r.Buffered())
	return bytes.Contains(b, []byte("\n\n")) || bytes.Contains(b, []byte("\r\n\r\n")) || bytes.Contains(b, []byte("\r\r"))
}
