// Package jsonobj walks the members of a JSON object without decoding their
// values, for code that reads a few top-level fields of a body and passes
// the rest on as it came (the gateway's OpenAI edge choosing the streaming
// method, the completions plugin reading a request or an upstream's
// answer). encoding/json's Decoder.Token costs several allocations per
// token; this walk costs none for keys written without escapes.
//
// It checks the object's structure (keys, colons, commas, nesting) but not
// the values' grammar: a caller that needs the whole body to be valid JSON
// calls json.Valid first.
package jsonobj

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// Members calls fn with each member of the object body holds (whitespace
// around it allowed), in order: its key as encoding/json reads it (escapes
// resolved, invalid UTF-8 replaced), and its
// value as written. Both are valid until fn returns (the key may be
// reused), and are slices of body unless the key has escapes. fn returns
// false to stop the walk. Members reports false when body is not an object
// it can walk; the walk may then have called fn for the members before the
// fault.
func Members(body []byte, fn func(key, value []byte) bool) bool {
	i := skipSpace(body, 0)
	if i >= len(body) || body[i] != '{' {
		return false
	}
	i = skipSpace(body, i+1)
	if i < len(body) && body[i] == '}' {
		return skipSpace(body, i+1) == len(body)
	}
	for {
		if i >= len(body) || body[i] != '"' {
			return false
		}
		end := skipString(body, i)
		if end < 0 {
			return false
		}
		key := body[i+1 : end-1]
		if bytes.IndexByte(key, '\\') >= 0 || !utf8.Valid(key) {
			// As encoding/json reads it: escapes resolved, bad UTF-8 as U+FFFD.
			var s string
			if json.Unmarshal(body[i:end], &s) != nil {
				return false
			}
			key = []byte(s)
		}
		i = skipSpace(body, end)
		if i >= len(body) || body[i] != ':' {
			return false
		}
		i = skipSpace(body, i+1)
		end = skipValue(body, i)
		if end < 0 {
			return false
		}
		if !fn(key, body[i:end]) {
			return true
		}
		i = skipSpace(body, end)
		if i >= len(body) {
			return false
		}
		switch body[i] {
		case '}':
			return skipSpace(body, i+1) == len(body)
		case ',':
			i = skipSpace(body, i+1)
		default:
			return false
		}
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index after the string starting at b[i] (a
// quote), or -1 when it does not end.
func skipString(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return -1
}

// skipValue returns the index after the value starting at b[i], or -1.
// Objects and arrays are skipped by depth, strings inside them whole;
// other values run to the next delimiter.
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for ; i < len(b); i++ {
			switch b[i] {
			case '"':
				end := skipString(b, i)
				if end < 0 {
					return -1
				}
				i = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
		}
		return -1
	case ',', '}', ']', ':':
		return -1
	}
	start := i
	for i < len(b) && b[i] != ',' && b[i] != '}' && b[i] != ']' && b[i] != ' ' && b[i] != '\t' && b[i] != '\n' && b[i] != '\r' {
		i++
	}
	if i == start {
		return -1
	}
	return i
}

// Elements calls fn with each element of the array body holds (whitespace
// around it allowed), in order, as written. fn returns false to stop the
// walk. Elements reports false when body is not an array it can walk; as
// Members, it checks the structure but not the values' grammar.
func Elements(body []byte, fn func(value []byte) bool) bool {
	i := skipSpace(body, 0)
	if i >= len(body) || body[i] != '[' {
		return false
	}
	i = skipSpace(body, i+1)
	if i < len(body) && body[i] == ']' {
		return skipSpace(body, i+1) == len(body)
	}
	for {
		end := skipValue(body, i)
		if end < 0 {
			return false
		}
		if !fn(body[i:end]) {
			return true
		}
		i = skipSpace(body, end)
		if i >= len(body) {
			return false
		}
		switch body[i] {
		case ']':
			return skipSpace(body, i+1) == len(body)
		case ',':
			i = skipSpace(body, i+1)
		default:
			return false
		}
	}
}

// String returns the string a JSON string literal holds, as encoding/json
// reads it (escapes resolved, invalid UTF-8 replaced); false when raw is
// not a string. A literal without escapes costs one copy.
func String(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", false
	}
	in := raw[1 : len(raw)-1]
	if bytes.IndexByte(in, '\\') < 0 && utf8.Valid(in) {
		for _, c := range in {
			if c < 0x20 || c == '"' {
				return "", false // not a valid literal: as encoding/json, refuse it
			}
		}
		return string(in), true
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}
