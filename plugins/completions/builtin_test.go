package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestSvcBuiltinCountsTheTokensOfItsOwnText(t *testing.T) {
	t.Parallel()
	text, finish, pieces := builtinAnswer(0)
	if finish != "stop" || text != builtinReply || strings.Join(pieces, "") != text {
		t.Fatalf("%q %q", text, finish)
	}
	if countTokens(text) != len(pieces) {
		t.Fatalf("%d tokens counted, %d streamed", countTokens(text), len(pieces))
	}
	short, finish, pieces := builtinAnswer(3)
	if finish != "length" || len(pieces) != 3 || countTokens(short) != 3 {
		t.Fatalf("cut to 3: %q %q", short, finish)
	}
	if n := countTokens("Hello, wörld 42!"); n != 5 {
		t.Fatalf("countTokens = %d, want 5", n)
	}
}

const weatherTools = `"tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object"}}},{"type":"function","function":{"name":"get_time"}}]`

// builtinReplies runs svc-builtin on body, not streamed and streamed, and
// returns both answers' first choice: its tool calls (name and arguments,
// the stream's deltas put together by index), text and finish reason.
func builtinReplies(t *testing.T, body string) (calls [2][]toolCall, text [2]string, finish [2]string) {
	t.Helper()
	s := &service{now: time.Now}
	req := mustParse(t, body)
	raw, u := s.builtinCompletion(req)
	var c struct {
		Choices []struct {
			Message      assistantMessage `json:"message"`
			FinishReason string           `json:"finish_reason"`
		} `json:"choices"`
	}
	if err := json.Unmarshal(raw, &c); err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	calls[0], finish[0] = c.Choices[0].Message.ToolCalls, c.Choices[0].FinishReason
	if m := c.Choices[0].Message; m.Content != nil {
		text[0] = *m.Content
	}
	if u.CompletionTokens == 0 || u.TotalTokens != u.PromptTokens+u.CompletionTokens {
		t.Fatalf("usage %+v", u)
	}

	req = mustParse(t, strings.Replace(body, "{", `{"stream":true,`, 1))
	var events [][]byte
	su, err := s.builtinStream(req, func(ev []byte, _ bool) error { events = append(events, append([]byte(nil), ev...)); return nil })
	if err != nil || su != u {
		t.Fatalf("stream usage %+v, want %+v (%v)", su, u, err)
	}
	for _, ev := range events[:len(events)-1] {
		var ch chunk
		if err := json.Unmarshal(ev, &ch); err != nil {
			t.Fatalf("%s: %v", ev, err)
		}
		d := ch.Choices[0].Delta
		if d.Content != nil {
			text[1] += *d.Content
		}
		for _, tc := range d.ToolCalls {
			if tc.Index == nil {
				t.Fatalf("a streamed tool call without index: %s", ev)
			}
			for len(calls[1]) <= *tc.Index {
				calls[1] = append(calls[1], toolCall{})
			}
			got := &calls[1][*tc.Index]
			got.ID += tc.ID
			got.Type += tc.Type
			got.Function.Name += tc.Function.Name
			got.Function.Arguments += tc.Function.Arguments
		}
		if f := ch.Choices[0].FinishReason; f != nil {
			finish[1] = *f
		}
	}
	if string(events[len(events)-1]) != "[DONE]" {
		t.Fatalf("last event %s", events[len(events)-1])
	}
	return calls, text, finish
}

func TestSvcBuiltinCallsTheToolThatToolChoiceNamesOrTheFirstWhenRequired(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ rule, choice, want string }{
		{"required calls the first tool", `"required"`, "get_weather"},
		{"a named tool is called", `{"type":"function","function":{"name":"get_time"}}`, "get_time"},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			body := `{"model":"svc-builtin","messages":[{"role":"user","content":"Weather?"}],` + weatherTools + `,"tool_choice":` + tc.choice + `}`
			calls, text, finish := builtinReplies(t, body)
			for i, how := range []string{"not streamed", "streamed"} {
				if len(calls[i]) != 1 || finish[i] != "tool_calls" || text[i] != "" {
					t.Fatalf("%s: calls %+v, text %q, finish %q", how, calls[i], text[i], finish[i])
				}
				c := calls[i][0]
				if !strings.HasPrefix(c.ID, "call_") || c.Type != "function" || c.Function.Name != tc.want || c.Function.Arguments != "{}" {
					t.Fatalf("%s: call %+v", how, c)
				}
			}
		})
	}
}

func TestSvcBuiltinAnswersInTextWhenNoToolIsRequired(t *testing.T) {
	t.Parallel()
	for _, choice := range []string{"", `,"tool_choice":"auto"`, `,"tool_choice":"none"`} {
		body := `{"model":"svc-builtin","messages":[{"role":"user","content":"Weather?"}],` + weatherTools + choice + `}`
		calls, text, finish := builtinReplies(t, body)
		for i := range 2 {
			if len(calls[i]) != 0 || finish[i] != "stop" || text[i] != builtinReply {
				t.Fatalf("tool_choice %q: calls %+v, text %q, finish %q", choice, calls[i], text[i], finish[i])
			}
		}
	}
}

func TestSvcBuiltinRefusesAToolChoiceItCannotFollow(t *testing.T) {
	t.Parallel()
	for _, body := range []string{
		`{"model":"svc-builtin","messages":[{"role":"user","content":"x"}],"tool_choice":"required"}`,
		`{"model":"svc-builtin","messages":[{"role":"user","content":"x"}],` + weatherTools + `,"tool_choice":{"type":"function","function":{"name":"nope"}}}`,
	} {
		if _, e := parseRequest([]byte(body)); e == nil || e.Status != 400 || e.Param == nil || *e.Param != "tool_choice" {
			t.Fatalf("%s: %v", body, e)
		}
	}
	// For an upstream, tool_choice is the upstream's to judge.
	if _, e := parseRequest([]byte(`{"model":"m","messages":[{"role":"user","content":"x"}],"tool_choice":"required"}`)); e != nil {
		t.Fatalf("refused for an upstream: %s", e.Message)
	}
}
