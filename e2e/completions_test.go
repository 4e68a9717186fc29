package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/param"

	"github.com/svcplatform/svc/internal/gatewaytest"
	"github.com/svcplatform/svc/internal/openaitest"
)

// completionsWorld is a gateway whose config file routes model "fake" to
// two fake upstreams (the first failing every request) and model "cut" to
// one whose streams break mid-answer.
type completionsWorld struct {
	g            *gatewaytest.Gateway
	c            gatewaytest.Credentials
	broken, good *openaitest.Upstream
	cutter       *openaitest.Upstream
	client       openai.Client
}

const fakeReply = "The fake upstream answers this."

func newCompletionsWorld(t *testing.T) *completionsWorld {
	t.Helper()
	w := &completionsWorld{
		broken: openaitest.New(t, "never seen"),
		good:   openaitest.New(t, fakeReply),
		cutter: openaitest.New(t, "one two three four five six"),
	}
	w.broken.Always(openaitest.ServerError)
	w.cutter.Always(openaitest.BreakMidStream)
	w.good.Key = "good-secret"
	cfg := map[string]any{"completions": map[string]any{"upstreams": []any{
		map[string]any{"name": "broken", "base_url": w.broken.BaseURL, "models": []string{"fake"}, "timeout": "5s"},
		map[string]any{"name": "good", "base_url": w.good.BaseURL, "api_key_env": "E2E_GOOD_KEY", "models": []string{"fake"}, "weight": 3},
		map[string]any{"name": "cutter", "base_url": w.cutter.BaseURL, "models": []string{"cut"}},
	}}}
	b, _ := json.Marshal(cfg)
	path := filepath.Join(t.TempDir(), "gateway.json")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	w.g = gatewaytest.Start(t, gatewaytest.Options{Args: []string{"--config", path}, Env: []string{"E2E_GOOD_KEY=good-secret"}})
	w.c = w.g.Credentials(t)
	w.client = openai.NewClient(option.WithBaseURL(w.g.URL+"/v1/"), option.WithAPIKey(w.c.App.APIKey), option.WithMaxRetries(0))
	return w
}

func userMessage(text string) []openai.ChatCompletionMessageParamUnion {
	return []openai.ChatCompletionMessageParamUnion{openai.UserMessage(text)}
}

func TestTheOfficialOpenAIGoClientTalksToTheGatewayUnmodified(t *testing.T) {
	t.Parallel()
	w := newCompletionsWorld(t)
	ctx := context.Background()

	t.Run("models list svc-builtin and the configured models", func(t *testing.T) {
		page, err := w.client.Models.List(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, m := range page.Data {
			ids = append(ids, m.ID)
		}
		if strings.Join(ids, ",") != "svc-builtin,cut,fake" {
			t.Fatalf("models %v", ids)
		}
	})

	t.Run("svc-builtin answers with stop and honest usage", func(t *testing.T) {
		c, err := w.client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "svc-builtin", Messages: userMessage("Hello there")})
		if err != nil {
			t.Fatal(err)
		}
		if c.Object != "chat.completion" || c.Choices[0].FinishReason != "stop" || !strings.Contains(c.Choices[0].Message.Content, "not a language model") {
			t.Fatalf("%+v", c)
		}
		if c.Usage.PromptTokens != 3 || c.Usage.TotalTokens != c.Usage.PromptTokens+c.Usage.CompletionTokens {
			t.Fatalf("usage %+v", c.Usage)
		}
	})

	t.Run("a completion is proxied, failing over from the broken upstream", func(t *testing.T) {
		for range 4 {
			c, err := w.client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "fake", Messages: userMessage("Hi"),
				Temperature: param.NewOpt(0.2)})
			if err != nil {
				t.Fatal(err)
			}
			if c.Choices[0].Message.Content != fakeReply || c.Usage.PromptTokens != 10 {
				t.Fatalf("%+v", c)
			}
		}
		for _, r := range w.good.Requests() {
			if r.Authorization != "Bearer good-secret" || r.Body["temperature"] != 0.2 {
				t.Fatalf("upstream request %+v", r)
			}
		}
		// The broken upstream was tried, then taken out: at most the
		// breaker's threshold of calls.
		if n := len(w.broken.Requests()); n > 3 {
			t.Fatalf("the failing upstream got %d calls", n)
		}
	})

	t.Run("a stream with usage", func(t *testing.T) {
		s := w.client.Chat.Completions.NewStreaming(ctx, openai.ChatCompletionNewParams{Model: "fake", Messages: userMessage("Hi"),
			StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: param.NewOpt(true)}})
		var acc openai.ChatCompletionAccumulator
		for s.Next() {
			acc.AddChunk(s.Current())
		}
		if err := s.Err(); err != nil {
			t.Fatal(err)
		}
		if acc.Choices[0].Message.Content != fakeReply || acc.Usage.TotalTokens != 10+5 {
			t.Fatalf("streamed %q, usage %+v", acc.Choices[0].Message.Content, acc.Usage)
		}
	})

	t.Run("a stream of svc-builtin", func(t *testing.T) {
		s := w.client.Chat.Completions.NewStreaming(ctx, openai.ChatCompletionNewParams{Model: "svc-builtin", Messages: userMessage("Hi"),
			StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: param.NewOpt(true)}})
		var acc openai.ChatCompletionAccumulator
		for s.Next() {
			acc.AddChunk(s.Current())
		}
		if err := s.Err(); err != nil || !strings.HasPrefix(acc.Choices[0].Message.Content, "Thanks for your message!") {
			t.Fatalf("%v %q", err, acc.Choices[0].Message.Content)
		}
		if acc.Usage.CompletionTokens == 0 || acc.Usage.TotalTokens != acc.Usage.PromptTokens+acc.Usage.CompletionTokens {
			t.Fatalf("usage %+v", acc.Usage)
		}
	})

	t.Run("a stream broken mid-answer ends in an error and is not retried", func(t *testing.T) {
		s := w.client.Chat.Completions.NewStreaming(ctx, openai.ChatCompletionNewParams{Model: "cut", Messages: userMessage("Hi")})
		var text strings.Builder
		for s.Next() {
			for _, ch := range s.Current().Choices {
				text.WriteString(ch.Delta.Content)
			}
		}
		if s.Err() == nil || !strings.Contains(s.Err().Error(), "broke off") || text.Len() == 0 {
			t.Fatalf("after %q: %v", text.String(), s.Err())
		}
		if n := len(w.cutter.Requests()); n != 1 {
			t.Fatalf("the upstream was called %d times", n)
		}
	})

	t.Run("temperature 2.5 is refused as the client's own error type", func(t *testing.T) {
		_, err := w.client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "fake", Messages: userMessage("Hi"),
			Temperature: param.NewOpt(2.5)})
		var apiErr *openai.Error
		if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusBadRequest || apiErr.Param != "temperature" ||
			apiErr.Type != "invalid_request_error" {
			t.Fatalf("got %v", err)
		}
	})

	t.Run("an unknown model is 404", func(t *testing.T) {
		_, err := w.client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "nope", Messages: userMessage("Hi")})
		var apiErr *openai.Error
		if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusNotFound || apiErr.Code != "model_not_found" {
			t.Fatalf("got %v", err)
		}
	})

	t.Run("no credential is 401 in OpenAI's shape", func(t *testing.T) {
		anon := openai.NewClient(option.WithBaseURL(w.g.URL+"/v1/"), option.WithAPIKey("svc_test_not-a-key"), option.WithMaxRetries(0))
		_, err := anon.Models.List(ctx)
		var apiErr *openai.Error
		if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusUnauthorized || apiErr.Code != "invalid_api_key" {
			t.Fatalf("got %v", err)
		}
	})

	t.Run("a user token works too", func(t *testing.T) {
		tok := w.g.UserToken(t, "owner", "public_profile")
		user := openai.NewClient(option.WithBaseURL(w.g.URL+"/v1/"), option.WithAPIKey(tok), option.WithMaxRetries(0))
		if _, err := user.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "svc-builtin", Messages: userMessage("Hi")}); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("usage is recorded per app and model", func(t *testing.T) {
		res, body := do(t, "GET", w.g.URL+"/api/v1/graph?node=app/"+w.c.App.ID+"/completions_usage", nil,
			map[string]string{"Authorization": "Bearer " + w.c.App.APIKey})
		if res.StatusCode != 200 {
			t.Fatalf("%d %s", res.StatusCode, body)
		}
		rows := decode[struct {
			Data []struct {
				Model                                                 string
				Requests, PromptTokens, CompletionTokens, TotalTokens int
				Day                                                   string
			} `json:"data"`
		}](t, []byte(strings.NewReplacer(`"prompt_tokens"`, `"PromptTokens"`, `"completion_tokens"`, `"CompletionTokens"`, `"total_tokens"`, `"TotalTokens"`).Replace(string(body))))
		byModel := map[string]int{}
		for _, r := range rows.Data {
			if r.TotalTokens != r.PromptTokens+r.CompletionTokens || r.Day == "" {
				t.Fatalf("row %+v", r)
			}
			byModel[r.Model] = r.Requests
		}
		// fake: 4 completions and 1 stream; cut: the broken stream;
		// svc-builtin: 2 by the app key (the user token's app is the same app).
		if byModel["fake"] != 5 || byModel["svc-builtin"] != 3 || byModel["cut"] != 1 {
			t.Fatalf("usage %s", body)
		}
	})

	t.Run("another plugin's call to Complete gets a reply with the same routing", func(t *testing.T) {
		res, body := do(t, "POST", w.g.URL+"/svc.completions.v1.CompletionsService/Complete",
			strings.NewReader(`{"model":"fake","messages":[{"role":"user","content":"Hi"}]}`),
			map[string]string{"Authorization": "Bearer " + w.c.App.APIKey, "Content-Type": "application/json", "Connect-Protocol-Version": "1"})
		if res.StatusCode != 200 || !strings.Contains(string(body), fakeReply) {
			t.Fatalf("%d %s", res.StatusCode, body)
		}
	})

	t.Run("the plugin's counters are on the gateway's /metrics", func(t *testing.T) {
		_, body := scrape(t, w.g)
		if !strings.Contains(string(body), `svc_completions_requests_total{model="fake",upstream="good"}`) ||
			!strings.Contains(string(body), `svc_completions_tokens_total{kind="prompt",model="svc-builtin",upstream="svc-builtin"}`) {
			t.Fatalf("metrics lack the completions counters:\n%s", body)
		}
		// The broken upstream comes first in a weighted draw one time in
		// four; when it did, its failures are counted.
		if len(w.broken.Requests()) > 0 && !strings.Contains(string(body), `svc_completions_upstream_attempts_total{outcome="failed",upstream="broken"}`) {
			t.Fatalf("failed attempts not counted:\n%s", body)
		}
	})
}
