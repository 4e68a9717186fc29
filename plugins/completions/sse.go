package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
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
	lastCR bool
}

func newSSEReader(r io.Reader) *sseReader {
	return &sseReader{r: bufio.NewReaderSize(r, 16<<10)}
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
// returns what is left with io.EOF.
func (s *sseReader) line() ([]byte, error) {
	var out []byte
	for {
		b, err := s.r.ReadByte()
		if err != nil {
			return out, err
		}
		if s.lastCR {
			s.lastCR = false
			if b == '\n' && out == nil {
				continue
			}
		}
		switch b {
		case '\n':
			return nonNil(out), nil
		case '\r':
			s.lastCR = true
			return nonNil(out), nil
		}
		if len(out) > maxEventBytes {
			return nil, fmt.Errorf("reading an event line: %w", errEventTooLarge)
		}
		out = append(out, b)
	}
}

func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

// ready tells whether a whole next event is already buffered, so that a
// caller forwarding events may wait for it and send both at once.
func (s *sseReader) ready() bool {
	b, _ := s.r.Peek(s.r.Buffered())
	return bytes.Contains(b, []byte("\n\n")) || bytes.Contains(b, []byte("\r\n\r\n")) || bytes.Contains(b, []byte("\r\r"))
}
