package main

import (
	"encoding/json"
	"testing"
)

func TestRequestRules(t *testing.T) {
	t.Parallel()
	const msgs = `"messages":[{"role":"user","content":"hi"}]`
	for _, tc := range []struct {
		rule, body, param, code string
	}{
		{"a body that is not a JSON object is refused", `[1]`, "", "invalid_json"},
		{"broken JSON is refused", `{"model":`, "", "invalid_json"},
		{"no model is refused", `{` + msgs + `}`, "model", "missing_required_parameter"},
		{"a model that is not a string is refused", `{"model":3,` + msgs + `}`, "model", "invalid_type"},
		{"no messages is refused", `{"model":"m"}`, "messages", "missing_required_parameter"},
		{"an empty messages array is refused", `{"model":"m","messages":[]}`, "messages", "empty_array"},
		{"an unknown role is refused", `{"model":"m","messages":[{"role":"robot","content":"x"}]}`, "messages[0].role", "invalid_value"},
		{"a message without role is refused", `{"model":"m","messages":[{"content":"x"}]}`, "messages[0].role", "missing_required_parameter"},
		{"content of another type is refused", `{"model":"m","messages":[{"role":"user","content":42}]}`, "messages[0].content", "invalid_type"},
		{"a content part that is not text is refused", `{"model":"m","messages":[{"role":"user","content":[{"type":"image_url","image_url":{}}]}]}`, "messages[0].content[0].type", "invalid_value"},
		{"a user message without content is refused", `{"model":"m","messages":[{"role":"user"}]}`, "messages[0].content", "missing_required_parameter"},
		{"temperature 2.5 is refused naming temperature", `{"model":"m",` + msgs + `,"temperature":2.5}`, "temperature", "decimal_above_max_value"},
		{"a negative temperature is refused", `{"model":"m",` + msgs + `,"temperature":-0.1}`, "temperature", "decimal_below_min_value"},
		{"a temperature that is not a number is refused", `{"model":"m",` + msgs + `,"temperature":"hot"}`, "temperature", "invalid_type"},
		{"top_p above 1 is refused", `{"model":"m",` + msgs + `,"top_p":1.5}`, "top_p", "decimal_above_max_value"},
		{"max_tokens 0 is refused", `{"model":"m",` + msgs + `,"max_tokens":0}`, "max_tokens", "decimal_below_min_value"},
		{"a fractional max_tokens is refused", `{"model":"m",` + msgs + `,"max_tokens":1.5}`, "max_tokens", "invalid_type"},
		{"n 0 is refused", `{"model":"m",` + msgs + `,"n":0}`, "n", "decimal_below_min_value"},
		{"five stop sequences are refused", `{"model":"m",` + msgs + `,"stop":["a","b","c","d","e"]}`, "stop", "array_above_max_length"},
		{"a stop that is a number is refused", `{"model":"m",` + msgs + `,"stop":1}`, "stop", "invalid_type"},
		{"stream that is not a boolean is refused", `{"model":"m",` + msgs + `,"stream":"yes"}`, "stream", "invalid_type"},
		{"stream_options without stream is refused", `{"model":"m",` + msgs + `,"stream_options":{"include_usage":true}}`, "stream_options", "invalid_value"},
		{"a user that is not a string is refused", `{"model":"m",` + msgs + `,"user":1}`, "user", "invalid_type"},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			_, e := parseRequest([]byte(tc.body))
			if e == nil {
				t.Fatal("accepted")
			}
			param, code := "", ""
			if e.Param != nil {
				param = *e.Param
			}
			if e.Code != nil {
				code = *e.Code
			}
			if e.Status != 400 || param != tc.param || code != tc.code || e.Type != "invalid_request_error" {
				t.Fatalf("got %d param %q code %q: %s", e.Status, param, code, e.Message)
			}
			var shape struct {
				Error map[string]any `json:"error"`
			}
			if err := json.Unmarshal(e.body(), &shape); err != nil || len(shape.Error) != 4 {
				t.Fatalf("error body %s", e.body())
			}
		})
	}
}

func TestRequestsCurrentClientsSendAreAccepted(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ rule, body string }{
		{"every role with string content", `{"model":"m","messages":[{"role":"system","content":"s"},{"role":"developer","content":"d"},{"role":"user","content":"u"},{"role":"assistant","content":"a"}]}`},
		{"content as an array of text parts", `{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}]}`},
		{"an assistant message without content", `{"model":"m","messages":[{"role":"user","content":"u"},{"role":"assistant","content":null}]}`},
		{"every documented field at its limits", `{"model":"m","messages":[{"role":"user","content":"u"}],"temperature":2,"top_p":0,"max_tokens":1,"n":2,"stop":["a","b","c","d"],"stream":true,"stream_options":{"include_usage":true},"user":"u1"}`},
		{"unknown fields", `{"model":"m","messages":[{"role":"user","content":"u"}],"reasoning_effort":"low","metadata":{"k":"v"}}`},
		{"nulls for optional fields", `{"model":"m","messages":[{"role":"user","content":"u"}],"temperature":null,"stop":null,"stream":null}`},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			req, e := parseRequest([]byte(tc.body))
			if e != nil {
				t.Fatalf("refused: %s", e.Message)
			}
			var back map[string]any
			if err := json.Unmarshal(req.upstreamBody(), &back); err != nil {
				t.Fatalf("upstream body %s: %v", req.upstreamBody(), err)
			}
		})
	}
	req, _ := parseRequest([]byte(`{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}]}`))
	if req.Messages[0].Content != "ab" {
		t.Fatalf("text parts read as %q", req.Messages[0].Content)
	}
}

// FuzzParseRequest checks that any body is either refused with a 400 in
// OpenAI's shape or accepted with an upstream body that is valid JSON
// keeping the model.
func FuzzParseRequest(f *testing.F) {
	for _, s := range []string{
		`{"model":"m","messages":[{"role":"user","content":"hi"}]}`,
		`{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"a"}]}],"stream":true,"stream_options":{"include_usage":true}}`,
		`{"model":"m","messages":[{"role":"user","content":"x"}],"temperature":2.5}`,
		`{"model":"m","model":"n","messages":[{"role":"assistant"}],"x":[1,{"y":null}]}`,
		`{}`, `[]`, `"s"`, `{"model":"m"} {}`, "{\"model\":\"\xff\"}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		req, e := parseRequest(body)
		if e != nil {
			if e.Status != 400 || !json.Valid(e.body()) {
				t.Fatalf("refusal %d %s", e.Status, e.body())
			}
			return
		}
		var back map[string]json.RawMessage
		if err := json.Unmarshal(req.upstreamBody(), &back); err != nil {
			t.Fatalf("upstream body %q: %v", req.upstreamBody(), err)
		}
		var m string
		if err := json.Unmarshal(back["model"], &m); err != nil || m != req.Model || len(req.Messages) == 0 {
			t.Fatalf("model %q vs %q", back["model"], req.Model)
		}
	})
}
