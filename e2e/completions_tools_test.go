package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/shared"

	"github.com/svcplatform/svc/internal/gatewaytest"
	"github.com/svcplatform/svc/internal/openaitest"
)

// Issue 29: OpenAI's whole chat API through the gateway (CONTRACT §20),
// driven by the official openai-go client, unmodified, against a fake
// upstream that answers as OpenAI's published API does (internal/
// openaitest). Model "agent" is served by an upstream failing every
// request and a good one, so each request may fail over first.

type agentWorld struct {
	g        *gatewaytest.Gateway
	c        gatewaytest.Credentials
	up, down *openaitest.Upstream
	client   openai.Client
}

func newAgentWorld(t *testing.T) *agentWorld {
	t.Helper()
	w := &agentWorld{up: openaitest.New(t, "Paris is sunny today."), down: openaitest.New(t, "never seen")}
	w.down.Always(openaitest.ServerError)
	path := writeCompletionsConfig(t, map[string]any{"upstreams": []any{
		map[string]any{"name": "down", "base_url": w.down.BaseURL, "models": []string{"agent"}},
		map[string]any{"name": "up", "base_url": w.up.BaseURL, "models": []string{"agent"}},
	}})
	w.g = gatewaytest.Start(t, gatewaytest.Options{Args: []string{"--config", path}})
	w.c = w.g.Credentials(t)
	w.client = openai.NewClient(option.WithBaseURL(w.g.URL+"/v1/"), option.WithAPIKey(w.c.App.APIKey), option.WithMaxRetries(0))
	return w
}

var weatherTool = openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
	Name:        "get_weather",
	Description: param.NewOpt("The weather in a city"),
	Parameters: shared.FunctionParameters{"type": "object", "required": []string{"city"},
		"properties": map[string]any{"city": map[string]any{"type": "string"}}},
	Strict: param.NewOpt(true),
})

// complete asks for one completion, streamed or not, and returns it as
// the client has it (a stream put together by the client's accumulator).
func complete(t *testing.T, client openai.Client, streamed bool, p openai.ChatCompletionNewParams) openai.ChatCompletion {
	t.Helper()
	ctx := context.Background()
	if !streamed {
		var res *http.Response
		c, err := client.Chat.Completions.New(ctx, p, option.WithResponseInto(&res))
		if err != nil {
			t.Fatal(err)
		}
		if res.Header.Get("x-request-id") == "" {
			t.Fatal("no x-request-id")
		}
		return *c
	}
	p.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: param.NewOpt(true)}
	s := client.Chat.Completions.NewStreaming(ctx, p)
	var acc openai.ChatCompletionAccumulator
	for s.Next() {
		if !acc.AddChunk(s.Current()) {
			t.Fatalf("the accumulator refused chunk %s", s.Current().RawJSON())
		}
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	return acc.ChatCompletion
}

func TestAToolCallingConversationThroughTheGatewayWithTheOfficialGoClient(t *testing.T) {
	t.Parallel()
	w := newAgentWorld(t)
	for _, tc := range []struct {
		model  string
		choice openai.ChatCompletionToolChoiceOptionUnionParam
		// wantArgs and wantFinal are what the model answers: the fake
		// upstream fills the tool's parameters and quotes the tool's
		// result; svc-builtin calls with {} and then answers in text.
		wantArgs, wantFinal string
	}{
		{"agent", openai.ChatCompletionToolChoiceOptionUnionParam{}, `{"city":"fake"}`, `The tool call_fake_get_weather answered {"temp":21}`},
		{"svc-builtin", openai.ChatCompletionToolChoiceOptionUnionParam{OfAuto: param.NewOpt("required")}, `{}`, "Thanks for your message!"},
	} {
		for _, streamed := range []bool{false, true} {
			name := tc.model + map[bool]string{false: " not streamed", true: " streamed"}[streamed]
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				msgs := []openai.ChatCompletionMessageParamUnion{
					openai.DeveloperMessage("Use the tools."), openai.UserMessage("What is the weather in Paris?")}
				p := openai.ChatCompletionNewParams{Model: tc.model, Messages: msgs, ToolChoice: tc.choice,
					Tools: []openai.ChatCompletionToolUnionParam{weatherTool}, ParallelToolCalls: param.NewOpt(false)}
				c := complete(t, w.client, streamed, p)
				m := c.Choices[0].Message
				if c.Choices[0].FinishReason != "tool_calls" || len(m.ToolCalls) != 1 || m.ToolCalls[0].Function.Name != "get_weather" ||
					m.ToolCalls[0].Function.Arguments != tc.wantArgs || m.ToolCalls[0].ID == "" || m.ToolCalls[0].Type != "function" {
					t.Fatalf("first answer %+v", c.Choices[0])
				}
				if c.Usage.TotalTokens == 0 || c.Usage.TotalTokens != c.Usage.PromptTokens+c.Usage.CompletionTokens {
					t.Fatalf("usage %+v", c.Usage)
				}
				// The follow-up carries the call and the tool's result.
				p.Messages = append(msgs, m.ToParam(), openai.ToolMessage(`{"temp":21}`, m.ToolCalls[0].ID))
				p.ToolChoice = openai.ChatCompletionToolChoiceOptionUnionParam{OfAuto: param.NewOpt("auto")}
				c = complete(t, w.client, streamed, p)
				if c.Choices[0].FinishReason != "stop" || len(c.Choices[0].Message.ToolCalls) != 0 ||
					!strings.HasPrefix(c.Choices[0].Message.Content, tc.wantFinal) {
					t.Fatalf("final answer %+v", c.Choices[0])
				}
			})
		}
	}
	t.Run("the upstream got the tool messages as the client sent them", func(t *testing.T) {
		t.Parallel()
		raw := rawFollowUp(t, w, `{"model":"agent","messages":[{"role":"user","content":"Weather?"},`+
			`{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]},`+
			`{"role":"tool","tool_call_id":"call_1","content":"{\"temp\":21}"}],"tools":[{"type":"function","function":{"name":"get_weather"}}],"tool_choice":"auto"}`)
		if !strings.Contains(raw, `{"role":"tool","tool_call_id":"call_1","content":"{\"temp\":21}"}`) ||
			!strings.Contains(raw, `"tool_calls":[{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]`) {
			t.Fatalf("upstream got %s", raw)
		}
	})
}

// rawFollowUp posts body as it is and returns the body the good upstream
// got for it (the last holding its first message, "Weather?").
func rawFollowUp(t *testing.T, w *agentWorld, body string) string {
	t.Helper()
	res, got := do(t, "POST", w.g.URL+"/v1/chat/completions", strings.NewReader(body),
		map[string]string{"Authorization": "Bearer " + w.c.App.APIKey, "Content-Type": "application/json"})
	if res.StatusCode != 200 {
		t.Fatalf("%d %s", res.StatusCode, got)
	}
	raw := ""
	for _, r := range w.up.Requests() {
		if strings.Contains(string(r.Raw), `"content":"Weather?"`) {
			raw = string(r.Raw)
		}
	}
	if raw == "" {
		t.Fatal("the upstream never got it")
	}
	return raw
}

func TestAVisionRequestReachesTheUpstreamWithItsImage(t *testing.T) {
	t.Parallel()
	w := newAgentWorld(t)
	const image = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
	for _, streamed := range []bool{false, true} {
		question := "What is in this picture? " + map[bool]string{false: "(1)", true: "(2)"}[streamed]
		c := complete(t, w.client, streamed, openai.ChatCompletionNewParams{Model: "agent", Messages: []openai.ChatCompletionMessageParamUnion{
			openai.UserMessage([]openai.ChatCompletionContentPartUnionParam{openai.TextContentPart(question),
				openai.ImageContentPart(openai.ChatCompletionContentPartImageImageURLParam{URL: image, Detail: "low"})})}})
		if c.Choices[0].Message.Content != "Paris is sunny today." || c.Choices[0].FinishReason != "stop" {
			t.Fatalf("streamed %v: %+v", streamed, c.Choices[0])
		}
		found := false
		for _, r := range w.up.Requests() {
			if !strings.Contains(string(r.Raw), question) {
				continue
			}
			msgs, _ := r.Body["messages"].([]any)
			parts, _ := msgs[0].(map[string]any)["content"].([]any)
			part, _ := parts[1].(map[string]any)
			url, _ := part["image_url"].(map[string]any)
			found = len(parts) == 2 && part["type"] == "image_url" && url["url"] == image && url["detail"] == "low"
		}
		if !found {
			t.Fatalf("streamed %v: the upstream did not get the image part as sent: %v", streamed, w.up.Requests())
		}
	}
}

func TestAJSONSchemaResponseFormatGetsADocumentOfTheSchema(t *testing.T) {
	t.Parallel()
	w := newAgentWorld(t)
	format := openai.ChatCompletionNewParamsResponseFormatUnion{OfJSONSchema: &shared.ResponseFormatJSONSchemaParam{
		JSONSchema: shared.ResponseFormatJSONSchemaJSONSchemaParam{Name: "weather", Strict: param.NewOpt(true),
			Schema: map[string]any{"type": "object", "additionalProperties": false, "required": []string{"city", "celsius"},
				"properties": map[string]any{"city": map[string]any{"type": "string"}, "celsius": map[string]any{"type": "number"}}}}}}
	for _, streamed := range []bool{false, true} {
		c := complete(t, w.client, streamed, openai.ChatCompletionNewParams{Model: "agent", Messages: userMessage("Weather in Paris, as JSON"),
			ResponseFormat: format, Seed: param.NewOpt[int64](7), Logprobs: param.NewOpt(true), TopLogprobs: param.NewOpt[int64](2),
			Metadata: shared.Metadata{"trace": "t1"}, MaxCompletionTokens: param.NewOpt[int64](50),
			Stop: openai.ChatCompletionNewParamsStopUnion{OfStringArray: []string{"\n\n"}}})
		var doc struct {
			City    string  `json:"city"`
			Celsius float64 `json:"celsius"`
		}
		if err := json.Unmarshal([]byte(c.Choices[0].Message.Content), &doc); err != nil || doc.City != "fake" || doc.Celsius != 1 {
			t.Fatalf("streamed %v: %q (%v)", streamed, c.Choices[0].Message.Content, err)
		}
		// Logprobs come back as the upstream wrote them (the document is
		// one token: it has no space).
		if lp := c.Choices[0].Logprobs.Content; len(lp) == 0 || lp[0].Logprob != -0.25 || lp[0].Token != c.Choices[0].Message.Content {
			t.Fatalf("streamed %v: logprobs %+v", streamed, c.Choices[0].Logprobs)
		}
	}
	for _, r := range w.up.Requests() {
		if r.Body["model"] == "agent" && (r.Body["seed"] != float64(7) || r.Body["top_logprobs"] != float64(2) || r.Body["max_completion_tokens"] != float64(50)) {
			t.Fatalf("upstream got %s", r.Raw)
		}
	}
}

func TestAFieldNoClientKnowsYetPassesThroughTheGatewayBothWays(t *testing.T) {
	t.Parallel()
	w := newAgentWorld(t)
	const future = `"x_future_field":{"nested":[1,2.50,"three",{"deep":null}]}`
	const back = `"` + openaitest.FutureField + `":{"kept":[1,2.50,"three"]}`
	header := map[string]string{"Authorization": "Bearer " + w.c.App.APIKey, "Content-Type": "application/json"}
	for _, body := range []string{
		`{"model":"agent","messages":[{"role":"user","content":"one"}],` + future + `}`,
		`{"model":"agent","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"two"}],` + future + `}`,
	} {
		res, got := do(t, "POST", w.g.URL+"/v1/chat/completions", strings.NewReader(body), header)
		if res.StatusCode != 200 || res.Header.Get("x-request-id") == "" {
			t.Fatalf("%d, x-request-id %q: %s", res.StatusCode, res.Header.Get("x-request-id"), got)
		}
		// The answer's unknown field, in the body or in every chunk.
		if strings.Contains(body, `"stream":true`) {
			sc := bufio.NewScanner(strings.NewReader(string(got)))
			for sc.Scan() {
				if ev, ok := strings.CutPrefix(sc.Text(), "data: "); ok && ev != "[DONE]" && !strings.Contains(ev, back) {
					t.Fatalf("a chunk lost %s: %s", back, ev)
				}
			}
		} else if !strings.Contains(string(got), back) {
			t.Fatalf("the answer lost %s: %s", back, got)
		}
	}
	seen := 0
	for _, r := range w.up.Requests() {
		if strings.Contains(string(r.Raw), future) {
			seen++
		}
	}
	if seen < 2 {
		t.Fatalf("the upstream got the future field untouched %d times: %v", seen, w.up.Requests())
	}
	// A refusal carries x-request-id too, as OpenAI's clients log it.
	res, _ := do(t, "POST", w.g.URL+"/v1/chat/completions", strings.NewReader(`{"model":"agent","messages":[],"x":1}`), header)
	if res.StatusCode != 400 || res.Header.Get("x-request-id") == "" {
		t.Fatalf("refusal %d, x-request-id %q", res.StatusCode, res.Header.Get("x-request-id"))
	}
}
