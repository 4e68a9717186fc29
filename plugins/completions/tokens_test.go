package main

import (
	"encoding/json"
	"testing"
)

func TestStreamedTokens(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		rule string
		ev   string
		want int
	}{
		{"a content delta is one token", `{"choices":[{"index":0,"delta":{"content":" world"}}]}`, 1},
		{"the role chunk with empty content is none", `{"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}`, 0},
		{"a null content is none", `{"choices":[{"index":0,"delta":{"content":null}}]}`, 0},
		{"spaces around the colon are allowed", `{"choices":[{"delta":{"content" : "x"}}]}`, 1},
		{"each choice of n counts", `{"choices":[{"index":0,"delta":{"content":"a"}},{"index":1,"delta":{"content":"b"}}]}`, 2},
		{"reasoning text counts", `{"choices":[{"delta":{"reasoning_content":"hmm"}}]}`, 1},
		{"tool call arguments count", `{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"a\""}}]}}]}`, 1},
		{"refusal text counts", `{"choices":[{"delta":{"refusal":"I can't"}}]}`, 1},
		{"logprobs' refusal array is not text", `{"choices":[{"delta":{},"logprobs":{"content":null,"refusal":[{"token":"I"}]}}]}`, 0},
		{"a key's name inside a string is not a key", `{"choices":[{"delta":{"content":"say \"content\":\"x\""}}]}`, 1},
		{"logprobs' content array is not text", `{"choices":[{"delta":{},"logprobs":{"content":[{"token":"a"}]}}]}`, 0},
		{"the usage chunk has none", `{"choices":[],"usage":{"prompt_tokens":1}}`, 0},
	} {
		if got := streamedTokens([]byte(tc.ev)); got != tc.want {
			t.Errorf("%s: %s counted %d, want %d", tc.rule, tc.ev, got, tc.want)
		}
	}
}

func TestCarriesAnswer(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		rule string
		ev   string
		want bool
	}{
		{"the role chunk is a preamble", `{"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}`, false},
		{"text is an answer", `{"choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":null}]}`, true},
		{"a finish reason is an answer", `{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`, true},
		{"a streamed refusal is an answer", `{"choices":[{"index":0,"delta":{"refusal":"I can't"},"finish_reason":null}]}`, true},
		{"usage is an answer", `{"choices":[],"usage":{"prompt_tokens":1}}`, true},
		{"an event that is not a chunk (an error) ends the wait", `{"error":{"message":"x"}}`, true},
	} {
		if got := carriesAnswer([]byte(tc.ev)); got != tc.want {
			t.Errorf("%s: %s gave %v", tc.rule, tc.ev, got)
		}
	}
}

func TestEstimatePromptTokensIsAQuarterTokenPerBytePlusFourPerMessage(t *testing.T) {
	t.Parallel()
	got := estimatePromptTokens([]message{{Role: "system", Content: "Be brief."}, {Role: "user", Content: "Hi"}})
	if want := (4 + 3) + (4 + 1); got != want {
		t.Fatalf("estimate %d, want %d", got, want)
	}
}

// FuzzStreamedTokens: the scanner never panics, and never counts more
// tokens than there are quotes to open strings with.
func FuzzStreamedTokens(f *testing.F) {
	for _, s := range []string{
		`{"choices":[{"index":0,"delta":{"content":" world"}}]}`,
		`{"choices":[{"delta":{"content" :`, `"content"`, `"content":`, `"content": "`,
		`{"choices":[],"usage":{"prompt_tokens":1}}`, `{"error":{}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, ev []byte) {
		n := streamedTokens(ev)
		_ = carriesAnswer(ev)
		quotes := 0
		for _, b := range ev {
			if b == '"' {
				quotes++
			}
		}
		if n < 0 || n > quotes/3 {
			t.Fatalf("%q: %d tokens from %d quotes", ev, n, quotes)
		}
		if json.Valid(ev) && n > 0 && quotes < 4 {
			t.Fatalf("%q: %d tokens", ev, n)
		}
	})
}
