package main

import "bytes"

// Counting what a stream carried, without decoding it.
//
// A stream that ends without the upstream's usage chunk (the client left,
// the upstream broke off or ignores stream_options) is still counted:
//
//   - completion tokens: one per piece of generated text forwarded to the
//     client, that is per non-empty "content", "reasoning_content",
//     "refusal" or tool call "arguments" string of a chunk's choices. OpenAI-compatible
//     servers send one token per chunk (OpenAI, vLLM, Ollama and llama.cpp
//     all do), so this is the count the upstream would have reported for
//     what the client received;
//   - prompt tokens: estimatePromptTokens, since only the upstream's
//     tokenizer knows the real figure.
//
// The scanner looks for the key with its quotes followed by a colon, so a
// key's name inside a string value (where its quotes are escaped) is never
// taken for a key.

var (
	keyContent   = []byte(`"content"`)
	keyReasoning = []byte(`"reasoning_content"`)
	keyArguments = []byte(`"arguments"`)
	keyRefusal   = []byte(`"refusal"`)
	keyFinish    = []byte(`"finish_reason"`)
	keyUsage     = []byte(`"usage"`)
)

// streamedTokens counts the pieces of generated text in one chunk.
func streamedTokens(ev []byte) int {
	return countValues(ev, keyContent, nonEmptyString) +
		countValues(ev, keyReasoning, nonEmptyString) +
		countValues(ev, keyArguments, nonEmptyString) +
		countValues(ev, keyRefusal, nonEmptyString)
}

// carriesAnswer tells whether a chunk is more than a preamble: it has
// generated text, a finish reason or usage. A stream's first such chunk is
// its first token, the end of the time-to-first-token wait; chunks before
// it (the role, empty deltas) are held back so that a stream that stalls
// there may still go to another upstream.
func carriesAnswer(ev []byte) bool {
	return streamedTokens(ev) > 0 || countValues(ev, keyFinish, nonEmptyString) > 0 ||
		countValues(ev, keyUsage, object) > 0 || !bytes.Contains(ev, []byte(`"choices"`))
}

// valueKind tells whether a value (its first bytes) is what is counted.
type valueKind func(v []byte) bool

func nonEmptyString(v []byte) bool { return len(v) >= 2 && v[0] == '"' && v[1] != '"' }
func object(v []byte) bool         { return len(v) >= 1 && v[0] == '{' }

// countValues counts the occurrences of key (with its quotes) used as an
// object key whose value is of the kind given.
func countValues(ev, key []byte, kind valueKind) int {
	n := 0
	for i := 0; i < len(ev); {
		j := bytes.Index(ev[i:], key)
		if j < 0 {
			break
		}
		p := skipSpace(ev, i+j+len(key))
		i = p
		if p >= len(ev) || ev[p] != ':' {
			continue
		}
		p = skipSpace(ev, p+1)
		if kind(ev[p:]) {
			n++
		}
	}
	return n
}

func skipSpace(b []byte, p int) int {
	for p < len(b) && (b[p] == ' ' || b[p] == '\t' || b[p] == '\n' || b[p] == '\r') {
		p++
	}
	return p
}

// estimatePromptTokens estimates a conversation's prompt tokens when the
// upstream never said: a quarter token per byte of text, rounded up, plus
// four per message for its role and framing (OpenAI's published rule of
// thumb: about four characters of English per token, and a few tokens of
// overhead per message).
func estimatePromptTokens(msgs []message) int {
	n := 0
	for _, m := range msgs {
		n += 4 + (len(m.Content)+3)/4
	}
	return n
}
