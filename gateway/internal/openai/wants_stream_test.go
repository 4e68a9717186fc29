package openai

import (
	"encoding/json"
	"testing"
)

func TestWantsStream(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		rule string
		body string
		want bool
	}{
		{"stream true streams", `{"model":"m","stream":true}`, true},
		{"stream false does not", `{"stream":false,"model":"m"}`, false},
		{"no stream field does not", `{"model":"m","messages":[{"role":"user","content":"\"stream\":true"}]}`, false},
		{"a nested stream field is not the request's", `{"metadata":{"stream":true},"x":[{"stream":true}]}`, false},
		{"spaces around the colon are allowed", "{ \"stream\" :\n true }", true},
		{"the last of a repeated key wins", `{"stream":true,"stream":false}`, false},
		{"keys match exactly", `{"Stream":true}`, false},
		{"a key written with escapes is read", `{"str\u0065am":true}`, true},
		{"a string true is not true", `{"stream":"true"}`, false},
		{"truthy is not true", `{"stream":truex}`, false},
		{"a body that is not an object does not", `[{"stream":true}]`, false},
		{"a broken body does not", `{"stream":true`, false},
	} {
		if got := wantsStream([]byte(tc.body), "stream"); got != tc.want {
			t.Errorf("%s: %s gave %v", tc.rule, tc.body, got)
		}
	}
}

// FuzzWantsStream: on every valid JSON object, the walk agrees with a full
// decode (exact keys, the last repeated key winning); it never panics on
// anything.
func FuzzWantsStream(f *testing.F) {
	for _, s := range []string{`{"stream":true}`, `{"a":{"b":[1,"]}"]},"stream":true}`, `{"stream":false}`, `{"s\"":1}`, `{`, `{"stream":true,}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		got := wantsStream(body, "stream")
		var m map[string]json.RawMessage
		if json.Unmarshal(body, &m) != nil || !json.Valid(body) {
			return
		}
		if want := string(m["stream"]) == "true"; got != want {
			t.Fatalf("%q: walk says %v, decode %v", body, got, want)
		}
	})
}
