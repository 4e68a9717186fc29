package main

import (
	"encoding/json"
	"strings"
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
		{"a content part without a type is refused", `{"model":"m","messages":[{"role":"user","content":[{"text":"x"}]}]}`, "messages[0].content[0].type", "missing_required_parameter"},
		{"a text part without text is refused", `{"model":"m","messages":[{"role":"user","content":[{"type":"text"}]}]}`, "messages[0].content[0].text", "missing_required_parameter"},
		{"a tool message without tool_call_id is refused", `{"model":"m","messages":[{"role":"tool","content":"42"}]}`, "messages[0].tool_call_id", "missing_required_parameter"},
		{"a tool_call_id that is not a string is refused", `{"model":"m","messages":[{"role":"tool","tool_call_id":1,"content":"42"}]}`, "messages[0].tool_call_id", "invalid_type"},
		{"a tool message without content is refused", `{"model":"m","messages":[{"role":"tool","tool_call_id":"call_1"}]}`, "messages[0].content", "missing_required_parameter"},
		{"a user message without content is refused", `{"model":"m","messages":[{"role":"user"}]}`, "messages[0].content", "missing_required_parameter"},
		{"temperature 2.5 is refused naming temperature", `{"model":"m",` + msgs + `,"temperature":2.5}`, "temperature", "decimal_above_max_value"},
		{"a negative temperature is refused", `{"model":"m",` + msgs + `,"temperature":-0.1}`, "temperature", "decimal_below_min_value"},
		{"a temperature that is not a number is refused", `{"model":"m",` + msgs + `,"temperature":"hot"}`, "temperature", "invalid_type"},
		{"max_tokens 0 is refused", `{"model":"m",` + msgs + `,"max_tokens":0}`, "max_tokens", "decimal_below_min_value"},
		{"a fractional max_tokens is refused", `{"model":"m",` + msgs + `,"max_tokens":1.5}`, "max_tokens", "invalid_type"},
		{"n 0 is refused", `{"model":"m",` + msgs + `,"n":0}`, "n", "decimal_below_min_value"},
		{"stream that is not a boolean is refused", `{"model":"m",` + msgs + `,"stream":"yes"}`, "stream", "invalid_type"},
		{"stream_options without stream is refused", `{"model":"m",` + msgs + `,"stream_options":{"include_usage":true}}`, "stream_options", "invalid_value"},
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
		{"a tool conversation with image, audio and file parts", toolConversation},
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

// toolConversation is a request OpenAI's clients send after the model
// called a tool: every field the gateway does not itself need, with
// values OpenAI documents, and one no API has yet.
const toolConversation = `{"model":"m","messages":[` +
	`{"role":"developer","content":"Use the tools."},` +
	`{"role":"user","content":[{"type":"text","text":"What is in this picture, and the weather there?"},` +
	`{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw0KGgo=","detail":"low"}},` +
	`{"type":"input_audio","input_audio":{"data":"UklGRg==","format":"wav"}},` +
	`{"type":"file","file":{"file_id":"file-abc"}}]},` +
	`{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]},` +
	`{"role":"tool","tool_call_id":"call_1","content":"{\"temp\":21}"}],` +
	`"tools":[{"type":"function","function":{"name":"get_weather","description":"Weather","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]},"strict":true}}],` +
	`"tool_choice":{"type":"function","function":{"name":"get_weather"}},"parallel_tool_calls":false,` +
	`"response_format":{"type":"json_schema","json_schema":{"name":"w","strict":true,"schema":{"type":"object","properties":{"t":{"type":"number"}}}}},` +
	`"logprobs":true,"top_logprobs":3,"stop":["a","b","c","d","e"],"seed":7,"n":2,"max_completion_tokens":50,"top_p":0.5,` +
	`"user":"u1","metadata":{"k":"v"},"store":false,"x_future_field":{"nested":[1,2.50,"three"]}}`

func TestEveryOpenAIChatFieldPassesToTheUpstreamUnchanged(t *testing.T) {
	t.Parallel()
	req, e := parseRequest([]byte(toolConversation))
	if e != nil {
		t.Fatalf("refused: %s", e.Message)
	}
	if got := string(req.upstreamBody()); got != toolConversation {
		t.Fatalf("upstream body changed:\n%s\nwant\n%s", got, toolConversation)
	}
	if req.Messages[1].Content != "What is in this picture, and the weather there?" || req.Messages[3].Role != "tool" {
		t.Fatalf("messages read as %+v", req.Messages)
	}
	// A stream whose client did not ask for usage is rewritten to ask
	// for it; every other field still goes as sent.
	streamed := strings.Replace(toolConversation, `"seed":7`, `"seed":7,"stream":true`, 1)
	req, e = parseRequest([]byte(streamed))
	if e != nil {
		t.Fatalf("refused: %s", e.Message)
	}
	var sent, asked map[string]json.RawMessage
	if err := json.Unmarshal(req.upstreamBody(), &sent); err != nil {
		t.Fatal(err)
	}
	_ = json.Unmarshal([]byte(streamed), &asked)
	for k, v := range asked {
		if string(sent[k]) != string(v) {
			t.Fatalf("%s sent as %s, asked %s", k, sent[k], v)
		}
	}
	if string(sent["stream_options"]) != `{"include_usage":true}` || len(sent) != len(asked)+1 {
		t.Fatalf("stream_options %s, %d fields for %d", sent["stream_options"], len(sent), len(asked))
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

func TestAStreamNotAskingForUsageGoesUpstreamAsSentWithOnlyStreamOptionsAdded(t *testing.T) {
	body := `{"model":"m", "stream":true,"messages":[{"role":"user","content":"a"}],"x_future":{"k":[1, 2]} }`
	req, e := parseRequest([]byte(body))
	if e != nil {
		t.Fatal(e.Message)
	}
	want := `{"model":"m", "stream":true,"messages":[{"role":"user","content":"a"}],"x_future":{"k":[1, 2]} ,"stream_options":{"include_usage":true}}`
	if got := string(req.upstreamBody()); got != want {
		t.Fatalf("sent %s\nwant %s", got, want)
	}
}
