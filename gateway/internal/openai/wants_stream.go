package openai

import (
	"bytes"
	"encoding/json"
)

// wantsStream tells whether a request body's top-level "stream" is true,
// choosing the plugin method to call. It walks the top-level object's keys
// and skips their values without decoding them, so that the body is
// decoded once, by the plugin. A body it cannot walk goes to the unary
// method, whose parser explains what is wrong. As in the plugin's parser,
// keys match exactly and the last of a repeated key wins; a key written
// with escapes is read by encoding/json.
func wantsStream(body []byte) bool {
	i := skipSpace(body, 0)
	if i >= len(body) || body[i] != '{' {
		return false
	}
	i++
	stream := false
	for {
		i = skipSpace(body, i)
		if i >= len(body) {
			return false
		}
		switch body[i] {
		case '}':
			return stream
		case ',':
			i++
			continue
		case '"':
		default:
			return false
		}
		end := skipString(body, i)
		if end < 0 {
			return false
		}
		key := body[i:end]
		if bytes.IndexByte(key, '\\') >= 0 {
			return slowWantsStream(body)
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
		if string(key) == `"stream"` {
			stream = string(body[i:end]) == "true"
		}
		i = end
	}
}

// slowWantsStream decodes the top level, for keys written with escapes.
func slowWantsStream(body []byte) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal(body, &m) != nil {
		return false
	}
	return string(m["stream"]) == "true"
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
