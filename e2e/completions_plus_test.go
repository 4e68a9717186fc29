package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/param"

	"github.com/svcplatform/svc/internal/gatewaytest"
	"github.com/svcplatform/svc/internal/openaitest"
	"github.com/svcplatform/svc/internal/pgtest"
)

// Issue 19: usage never lost, budgets across gateways, upstream health,
// visible overhead. The fake upstream's usage: 10 prompt tokens per
// message, one completion token per word of its reply (one word per chunk).

// writeCompletionsConfig writes a gateway config file with this
// completions section and returns its path.
func writeCompletionsConfig(t *testing.T, section map[string]any) string {
	t.Helper()
	b, _ := json.Marshal(map[string]any{"completions": section})
	path := filepath.Join(t.TempDir(), "gateway.json")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// estimatedPrompt is the documented estimate of a prompt's tokens when the
// upstream never reported them: a quarter token per byte, rounded up, plus
// four per message.
func estimatedPrompt(texts ...string) int {
	n := 0
	for _, s := range texts {
		n += 4 + (len(s)+3)/4
	}
	return n
}

type usageRow struct {
	Model            string `json:"model"`
	Requests         int    `json:"requests"`
	PromptTokens     int    `json:"prompt_tokens"`
	CompletionTokens int    `json:"completion_tokens"`
	TotalTokens      int    `json:"total_tokens"`
}

// usageOf reads app/<id>/completions_usage for one model (summed over days).
func usageOf(t *testing.T, g *gatewaytest.Gateway, c gatewaytest.Credentials, model string) usageRow {
	t.Helper()
	res, body := do(t, "GET", g.URL+"/api/v1/graph?node=app/"+c.App.ID+"/completions_usage", nil,
		map[string]string{"Authorization": "Bearer " + c.App.APIKey})
	if res.StatusCode != 200 {
		t.Fatalf("usage: %d %s", res.StatusCode, body)
	}
	rows := decode[struct{ Data []usageRow }](t, body)
	sum := usageRow{Model: model}
	for _, r := range rows.Data {
		if r.Model == model {
			sum.Requests += r.Requests
			sum.PromptTokens += r.PromptTokens
			sum.CompletionTokens += r.CompletionTokens
			sum.TotalTokens += r.TotalTokens
		}
	}
	return sum
}

// metric reads one sample of the gateway's /metrics (0 when absent).
func metric(t *testing.T, g *gatewaytest.Gateway, series string) float64 {
	t.Helper()
	_, body := scrape(t, g)
	for _, line := range strings.Split(string(body), "\n") {
		if v, ok := strings.CutPrefix(line, series+" "); ok {
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil {
				t.Fatalf("metric %s: %q", series, line)
			}
			return f
		}
	}
	return 0
}

// eventually polls cond until it holds, failing after a minute.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("never: %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestUsageIsRecordedForEveryRequestEvenStreamsAbortedAtRandomPoints(t *testing.T) {
	t.Parallel()
	up := openaitest.New(t, "one two three four five six seven eight nine ten eleven twelve")
	path := writeCompletionsConfig(t, map[string]any{"upstreams": []any{
		map[string]any{"name": "good", "base_url": up.BaseURL, "models": []string{"fake"}},
	}})
	db := pgtest.NewDatabase(t)
	g := gatewaytest.Start(t, gatewaytest.Options{DatabaseURL: db, Args: []string{"--config", path}})
	c := g.Credentials(t)
	client := openai.NewClient(option.WithBaseURL(g.URL+"/v1/"), option.WithAPIKey(c.App.APIKey), option.WithMaxRetries(0))
	seed := time.Now().UnixNano()
	rng := rand.New(rand.NewPCG(uint64(seed), 19))
	t.Logf("seed %d", seed)

	const question = "Hi"
	var want usageRow
	for i := range 24 {
		ctx, cancel := context.WithCancel(context.Background())
		params := openai.ChatCompletionNewParams{Model: "fake", Messages: userMessage(question)}
		k := 1 + rng.IntN(10) // the abort point, in content chunks
		switch kind := rng.IntN(4); kind {
		case 0: // not streamed
			cpl, err := client.Chat.Completions.New(ctx, params)
			if err != nil {
				t.Fatal(err)
			}
			want.PromptTokens += int(cpl.Usage.PromptTokens)
			want.CompletionTokens += int(cpl.Usage.CompletionTokens)
		case 1: // streamed to the end, with usage
			params.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: param.NewOpt(true)}
			s := client.Chat.Completions.NewStreaming(ctx, params)
			var acc openai.ChatCompletionAccumulator
			for s.Next() {
				acc.AddChunk(s.Current())
			}
			if err := s.Err(); err != nil || acc.Usage.TotalTokens == 0 {
				t.Fatalf("stream %d: %v, usage %+v", i, err, acc.Usage)
			}
			want.PromptTokens += int(acc.Usage.PromptTokens)
			want.CompletionTokens += int(acc.Usage.CompletionTokens)
		case 2, 3: // aborted by the client (2) or cut by the upstream (3) after k chunks
			field := "x_test_hold_after"
			if kind == 3 {
				field = "x_test_break_after"
			}
			s := client.Chat.Completions.NewStreaming(ctx, params, option.WithJSONSet(field, k))
			seen := 0
			for seen < k && s.Next() {
				for _, ch := range s.Current().Choices {
					if ch.Delta.Content != "" {
						seen++
					}
				}
			}
			if kind == 3 {
				for s.Next() {
				}
				if s.Err() == nil || !strings.Contains(s.Err().Error(), "broke off") {
					t.Fatalf("cut stream %d ended with %v", i, s.Err())
				}
			}
			cancel() // the client leaves
			_ = s.Close()
			if seen != k {
				t.Fatalf("stream %d: saw %d chunks before its abort point %d (%v)", i, seen, k, s.Err())
			}
			want.PromptTokens += estimatedPrompt(question)
			want.CompletionTokens += seen
		}
		cancel()
		want.Requests++
	}

	// A client that leaves a request that is not streamed while the
	// upstream is answering: the estimated prompt, nothing generated.
	up.FailNext(openaitest.Hang)
	asked := len(up.Requests())
	ctx, cancel := context.WithCancel(context.Background())
	left := make(chan error, 1)
	go func() {
		_, err := client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "fake", Messages: userMessage(question)})
		left <- err
	}()
	eventually(t, "the upstream asked", func() bool { return len(up.Requests()) > asked })
	cancel()
	if err := <-left; !errors.Is(err, context.Canceled) {
		t.Fatalf("the client left and got %v", err)
	}
	want.PromptTokens += estimatedPrompt(question)
	want.Requests++
	want.TotalTokens = want.PromptTokens + want.CompletionTokens

	// The last aborts are recorded when the plugin sees the client gone.
	var got usageRow
	eventually(t, "every request in completions_usage", func() bool {
		got = usageOf(t, g, c, "fake")
		return got.Requests >= want.Requests
	})
	got.Model, want.Model = "", ""
	if got != want {
		t.Fatalf("completions_usage %+v, the client saw %+v", got, want)
	}
	for kind, n := range map[string]int{"prompt": want.PromptTokens, "completion": want.CompletionTokens} {
		series := fmt.Sprintf(`svc_completions_tokens_total{kind=%q,model="fake",upstream="good"}`, kind)
		if m := metric(t, g, series); m != float64(n) {
			t.Fatalf("%s = %v, the client saw %d", series, m, n)
		}
	}
	if m := metric(t, g, `svc_completions_requests_total{model="fake",upstream="good"}`); m != float64(want.Requests) {
		t.Fatalf("requests_total = %v, want %d", m, want.Requests)
	}

	// Usage still in memory is written when the gateway stops.
	for range 3 {
		if _, err := client.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{Model: "fake", Messages: userMessage(question)}); err != nil {
			t.Fatal(err)
		}
	}
	g.Stop(t)
	if n := dbCount(t, db, "SELECT coalesce(sum(requests), 0)::int FROM completions.usage WHERE model = 'fake'"); n != want.Requests+3 {
		t.Fatalf("%d requests in the database after the stop, want %d", n, want.Requests+3)
	}
}

// budgetWorld is two gateways on one database, routing "fake" to one fake
// upstream (15 tokens a request).
type budgetWorld struct {
	a, b   *gatewaytest.Gateway
	c      gatewaytest.Credentials
	up     *openaitest.Upstream
	client [2]openai.Client
}

func newBudgetWorld(t *testing.T) *budgetWorld {
	t.Helper()
	w := &budgetWorld{up: openaitest.New(t, "one two three four five")}
	path := writeCompletionsConfig(t, map[string]any{"upstreams": []any{
		map[string]any{"name": "good", "base_url": w.up.BaseURL, "models": []string{"fake"}},
	}})
	db := pgtest.NewDatabase(t)
	dataDir := t.TempDir() // one installation: one master key
	w.a = gatewaytest.Start(t, gatewaytest.Options{DatabaseURL: db, DataDir: dataDir, Args: []string{"--config", path}})
	w.b = gatewaytest.Start(t, gatewaytest.AnotherMachine(t, gatewaytest.Options{DatabaseURL: db, DataDir: dataDir, Args: []string{"--config", path}}))
	w.c = w.a.Credentials(t)
	for i, g := range []*gatewaytest.Gateway{w.a, w.b} {
		w.client[i] = openai.NewClient(option.WithBaseURL(g.URL+"/v1/"), option.WithAPIKey(w.c.App.APIKey), option.WithMaxRetries(0))
	}
	return w
}

func (w *budgetWorld) setBudget(t *testing.T, g *gatewaytest.Gateway, token string, body map[string]any) (*http.Response, []byte) {
	t.Helper()
	body["node"] = "app/" + w.c.App.ID + "/completions_budget"
	b, _ := json.Marshal(body)
	return do(t, "POST", g.URL+"/api/v1/graph", strings.NewReader(string(b)),
		map[string]string{"Authorization": "Bearer " + token, "Content-Type": "application/json"})
}

type budgetView struct {
	MonthlyTokens     float64 `json:"monthly_tokens"`
	RequestsPerMinute float64 `json:"requests_per_minute"`
	UsedTokens        float64 `json:"used_tokens"`
	ResetsAt          string  `json:"resets_at"`
	Source            string  `json:"source"`
}

// refusal is the 429 of a request over a budget or limit.
func refusal(t *testing.T, err error) (*openai.Error, bool) {
	t.Helper()
	var apiErr *openai.Error
	if err == nil {
		return nil, false
	}
	if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("want a 429, got %v", err)
	}
	return apiErr, true
}

func TestTwoGatewaysOnOneDatabaseEnforceOneMonthlyTokenBudget(t *testing.T) {
	t.Parallel()
	w := newBudgetWorld(t)

	// Only a team Admin (or the app itself) sets it.
	consumer := signInAt(t, w.a.URL, w.c.Users["consumer"].Username, w.c.Users["consumer"].Password)
	res, body := w.setBudget(t, w.a, consumer, map[string]any{"monthly_tokens": 100})
	wantGraphError(t, res, body, 403, 200, 2069004)
	res, body = w.setBudget(t, w.a, w.c.App.APIKey, map[string]any{"monthly_tokens": 1.5})
	wantGraphError(t, res, body, 400, 100, 0)
	if res, body = w.setBudget(t, w.a, w.c.App.APIKey, map[string]any{"monthly_tokens": 100}); res.StatusCode != 200 {
		t.Fatalf("set budget: %d %s", res.StatusCode, body)
	}
	res, body = do(t, "GET", w.b.URL+"/api/v1/graph?node=app/"+w.c.App.ID+"/completions_budget", nil,
		map[string]string{"Authorization": "Bearer " + w.c.App.APIKey})
	view := decode[budgetView](t, body)
	now := time.Now().UTC()
	resets := time.Date(now.Year(), now.Month()+1, 1, 0, 0, 0, 0, time.UTC).Format(time.RFC3339)
	if res.StatusCode != 200 || view.MonthlyTokens != 100 || view.Source != "app" || view.ResetsAt != resets {
		t.Fatalf("budget read on the other gateway: %d %s", res.StatusCode, body)
	}

	// Requests alternate between the gateways until both refuse.
	used, refusedBy := 0, map[int]bool{}
	var last *openai.Error
	for i := 0; i < 40 && len(refusedBy) < 2; i++ {
		c, err := w.client[i%2].Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{Model: "fake", Messages: userMessage("Hi")})
		if e, refused := refusal(t, err); refused {
			refusedBy[i%2], last = true, e
			continue
		}
		if len(refusedBy) > 0 && refusedBy[i%2] {
			t.Fatalf("gateway %d answered after refusing", i%2)
		}
		used += int(c.Usage.TotalTokens)
	}
	if len(refusedBy) < 2 {
		t.Fatalf("%d tokens used and the gateways still answer", used)
	}
	// Worst case: under one request's tokens over the budget per gateway,
	// and a lease slice (5 tokens) per gateway under it.
	if used < 100-2*5 || used > 100+2*15 {
		t.Fatalf("%d tokens used against a budget of 100", used)
	}
	if last.Code != "budget_exceeded" || !strings.Contains(last.Message, "100 tokens") || !strings.Contains(last.Message, "resets at "+resets) {
		t.Fatalf("refusal %+v", last)
	}
	if ra, _ := strconv.Atoi(last.Response.Header.Get("Retry-After")); ra < 1 {
		t.Fatalf("Retry-After %q", last.Response.Header.Get("Retry-After"))
	}
	// The other gateway writes its usage within its flush interval.
	eventually(t, fmt.Sprintf("the usage of both gateways (%d tokens) in completions_usage", used), func() bool {
		return usageOf(t, w.a, w.c, "fake").TotalTokens == used
	})

	// Raising the budget lets requests through again.
	if res, body = w.setBudget(t, w.b, w.c.App.APIKey, map[string]any{"monthly_tokens": 0}); res.StatusCode != 200 {
		t.Fatalf("lift budget: %d %s", res.StatusCode, body)
	}
	if _, err := w.client[1].Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{Model: "fake", Messages: userMessage("Hi")}); err != nil {
		t.Fatalf("after lifting the budget: %v", err)
	}
}

func TestTwoGatewaysOnOneDatabaseEnforceOneRequestsPerMinuteLimit(t *testing.T) {
	t.Parallel()
	w := newBudgetWorld(t)
	if res, body := w.setBudget(t, w.a, w.c.App.APIKey, map[string]any{"requests_per_minute": 4}); res.StatusCode != 200 {
		t.Fatalf("set limit: %d %s", res.StatusCode, body)
	}
	for attempt := 0; ; attempt++ {
		minute := time.Now().UTC().Truncate(time.Minute)
		ok, refused := 0, 0
		var last *openai.Error
		for i := range 8 {
			_, err := w.client[i%2].Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{Model: "svc-builtin", Messages: userMessage("Hi")})
			if e, r := refusal(t, err); r {
				refused, last = refused+1, e
			} else {
				ok++
			}
		}
		if time.Now().UTC().Truncate(time.Minute) != minute && attempt < 3 {
			continue // the window turned during the run: its counts are split
		}
		if ok != 4 || refused != 4 {
			t.Fatalf("%d answered, %d refused; want 4 and 4", ok, refused)
		}
		if last.Code != "rate_limited" || !strings.Contains(last.Message, "4 chat completion requests per minute") ||
			!strings.Contains(last.Message, "resets at "+minute.Add(time.Minute).Format(time.RFC3339)) {
			t.Fatalf("refusal %+v", last)
		}
		ra, _ := strconv.Atoi(last.Response.Header.Get("Retry-After"))
		if ra < 1 || ra > 60 {
			t.Fatalf("Retry-After %q", last.Response.Header.Get("Retry-After"))
		}
		if h := last.Response.Header.Get("X-Svc-Overhead-Ms"); !overheadValue.MatchString(h) {
			t.Fatalf("429: X-Svc-Overhead-Ms %q", h)
		}
		return
	}
}

// overheadValue is an X-Svc-Overhead-Ms value: milliseconds, three decimals.
var overheadValue = regexp.MustCompile(`^\d+\.\d{3}$`)

// upstreamList is GET /api/admin/completions/upstreams.
type upstreamList struct {
	Upstreams []struct {
		Name          string   `json:"name"`
		State         string   `json:"state"`
		CooldownUntil string   `json:"cooldown_until"`
		LastError     string   `json:"last_error"`
		Models        []string `json:"models"`
	} `json:"upstreams"`
}

func upstreamState(t *testing.T, g *gatewaytest.Gateway, token, name string) (state, until, lastError string) {
	t.Helper()
	res, body := do(t, "GET", g.URL+"/api/admin/completions/upstreams", nil, map[string]string{"Authorization": "Bearer " + token})
	if res.StatusCode != 200 {
		t.Fatalf("admin upstreams: %d %s", res.StatusCode, body)
	}
	for _, u := range decode[upstreamList](t, body).Upstreams {
		if u.Name == name {
			return u.State, u.CooldownUntil, u.LastError
		}
	}
	t.Fatalf("upstream %s not listed: %s", name, body)
	return
}

func TestUpstreamsThatStallOrFailAreLeftProbedAndShownToOperators(t *testing.T) {
	t.Parallel()
	stall := openaitest.New(t, "never seen")
	stall.Always(openaitest.StallBeforeFirstToken)
	good := openaitest.New(t, fakeReply)
	flaky := openaitest.New(t, "Back again.")
	flaky.Always(openaitest.ServerError)
	path := writeCompletionsConfig(t, map[string]any{"upstreams": []any{
		map[string]any{"name": "stall", "base_url": stall.BaseURL, "models": []string{"fake"}, "weight": 1000, "ttft_timeout": "300ms", "cooldown": "10m"},
		map[string]any{"name": "good", "base_url": good.BaseURL, "models": []string{"fake"}},
		map[string]any{"name": "flaky", "base_url": flaky.BaseURL, "models": []string{"solo"}, "cooldown": "1s"},
	}})
	g := gatewaytest.Start(t, gatewaytest.Options{Args: []string{"--config", path}})
	c := g.Credentials(t)
	client := openai.NewClient(option.WithBaseURL(g.URL+"/v1/"), option.WithAPIKey(c.App.APIKey), option.WithMaxRetries(0))
	ctx := context.Background()

	t.Run("a stream with no first token in time goes to the next upstream", func(t *testing.T) {
		// Upstreams are drawn by weight: go on until the stalling one has
		// been tried three times, which opens its breaker.
		for i := 0; len(stall.Requests()) < 3; i++ {
			if i == 50 {
				t.Fatalf("the stalling upstream was tried %d times in 50 requests", len(stall.Requests()))
			}
			s := client.Chat.Completions.NewStreaming(ctx, openai.ChatCompletionNewParams{Model: "fake", Messages: userMessage("Hi")})
			var acc openai.ChatCompletionAccumulator
			for s.Next() {
				acc.AddChunk(s.Current())
			}
			if err := s.Err(); err != nil || acc.Choices[0].Message.Content != fakeReply {
				t.Fatalf("%v %+v", err, acc.Choices)
			}
		}
		state, _, lastError := upstreamState(t, g, c.AdminToken, "stall")
		if !strings.Contains(lastError, "no first token within 300ms") || state != "cooling_down" {
			t.Fatalf("stall: %s, %q after %d calls", state, lastError, len(stall.Requests()))
		}
	})

	t.Run("a failing upstream cools down, is probed with one token, and comes back", func(t *testing.T) {
		for range 3 {
			_, err := client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "solo", Messages: userMessage("Hi")})
			var apiErr *openai.Error
			if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusServiceUnavailable {
				t.Fatalf("got %v", err)
			}
			if h := apiErr.Response.Header.Get("X-Svc-Overhead-Ms"); !overheadValue.MatchString(h) {
				t.Fatalf("503: X-Svc-Overhead-Ms %q", h)
			}
		}
		state, until, lastError := upstreamState(t, g, c.AdminToken, "flaky")
		if state != "cooling_down" || until == "" || !strings.Contains(lastError, "500") {
			t.Fatalf("flaky: %s until %q, %q", state, until, lastError)
		}
		if _, err := time.Parse(time.RFC3339Nano, until); err != nil {
			t.Fatalf("cooldown_until %q: %v", until, err)
		}
		before := len(flaky.Requests())
		flaky.Always(openaitest.Answer)
		eventually(t, "flaky healthy again", func() bool {
			s, _, _ := upstreamState(t, g, c.AdminToken, "flaky")
			return s == "healthy"
		})
		probes := flaky.Requests()[before:]
		if len(probes) != 1 || probes[0].Body["max_tokens"] != float64(1) {
			t.Fatalf("probes %+v", probes)
		}
		cpl, err := client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "solo", Messages: userMessage("Hi")})
		if err != nil || cpl.Choices[0].Message.Content != "Back again." {
			t.Fatalf("%v %+v", err, cpl)
		}
	})

	t.Run("only the operator reads the upstreams", func(t *testing.T) {
		res, body := do(t, "GET", g.URL+"/api/admin/completions/upstreams", nil, map[string]string{"Authorization": "Bearer " + c.App.APIKey})
		if res.StatusCode != 403 && res.StatusCode != 401 {
			t.Fatalf("an app key read the upstreams: %d %s", res.StatusCode, body)
		}
		if strings.Contains(string(body), "stall") {
			t.Fatalf("refusal leaks upstreams: %s", body)
		}
	})

	t.Run("every answer says the gateway's overhead", func(t *testing.T) {
		var res *http.Response
		if _, err := client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "fake", Messages: userMessage("Hi")},
			option.WithResponseInto(&res)); err != nil {
			t.Fatal(err)
		}
		if h := res.Header.Get("X-Svc-Overhead-Ms"); !overheadValue.MatchString(h) {
			t.Fatalf("completion: X-Svc-Overhead-Ms %q", h)
		}
		s := client.Chat.Completions.NewStreaming(ctx, openai.ChatCompletionNewParams{Model: "svc-builtin", Messages: userMessage("Hi")},
			option.WithResponseInto(&res))
		for s.Next() {
		}
		if h := res.Header.Get("X-Svc-Overhead-Ms"); s.Err() != nil || !overheadValue.MatchString(h) {
			t.Fatalf("stream: %v, X-Svc-Overhead-Ms %q", s.Err(), h)
		}
		r, _ := do(t, "GET", g.URL+"/v1/models", nil, map[string]string{"Authorization": "Bearer nope"})
		if h := r.Header.Get("X-Svc-Overhead-Ms"); r.StatusCode != 401 || !overheadValue.MatchString(h) {
			t.Fatalf("refusal: %d, X-Svc-Overhead-Ms %q", r.StatusCode, h)
		}
	})
}

func TestTheAssistantFallsBackToItsBuiltInReplyWhenEveryUpstreamIsDown(t *testing.T) {
	t.Parallel()
	down := openaitest.New(t, "never delivered")
	down.Always(openaitest.ServerError)
	path := writeCompletionsConfig(t, map[string]any{"upstreams": []any{
		map[string]any{"name": "down", "base_url": down.BaseURL, "models": []string{"model"}, "cooldown": "10m"},
	}})
	db := pgtest.NewDatabase(t)
	g := gatewaytest.Start(t, gatewaytest.Options{DatabaseURL: db, Args: []string{"--config", path}})
	w := &chatWorld{graphWorld: &graphWorld{g: g, db: db, c: g.Credentials(t)}}
	w.consumerID = w.c.Users["consumer"].ID
	w.consumer = signIn(t, w.graphWorld, "consumer")
	w.owner = signIn(t, w.graphWorld, "owner")
	w.setPage(t, map[string]any{"inbox_automation": true})
	cid, _ := w.write(t, "Are you open today?")
	eventually(t, "the assistant's reply", func() bool {
		return dbCount(t, db, "SELECT count(*) FROM svcchat.messages WHERE sender = 'svc_ai' AND conversation_id = $1", cid) > 0
	})
	res, body := w.mobileGet(t, w.consumer, "threads/"+cid)
	th := decode[thread](t, body)
	want := "Thanks for your message! Someone from " + w.c.Page.Name + " will get back to you soon."
	if res.StatusCode != 200 || len(th.Messages) != 2 || th.Messages[1].Text != want {
		t.Fatalf("thread: %d %s", res.StatusCode, body)
	}
	if len(down.Requests()) == 0 {
		t.Fatal("the model was never asked")
	}
	if state, _, _ := upstreamState(t, g, w.c.AdminToken, "down"); state != "cooling_down" {
		t.Fatalf("down: %s", state)
	}
}

// The operator's budget and rate are ceilings (CONTRACT §15): an app may
// lower them, never lift them, and 0 from the app means the operator's
// value, not "none".
func TestAnAppCannotLiftTheOperatorsCompletionsBudgetOrRate(t *testing.T) {
	t.Parallel()
	up := openaitest.New(t, "one two three four five")
	// The fake upstream answers 15 tokens a request: two fit in 30.
	path := writeCompletionsConfig(t, map[string]any{
		"upstreams": []any{map[string]any{"name": "good", "base_url": up.BaseURL, "models": []string{"fake"}}},
		"budget":    map[string]any{"monthly_tokens": 30, "requests_per_minute": 600},
	})
	g := gatewaytest.Start(t, gatewaytest.Options{Args: []string{"--config", path}})
	w := &budgetWorld{a: g, c: g.Credentials(t), up: up}
	client := openai.NewClient(option.WithBaseURL(g.URL+"/v1/"), option.WithAPIKey(w.c.App.APIKey), option.WithMaxRetries(0))

	res, body := w.setBudget(t, g, w.c.App.APIKey, map[string]any{"monthly_tokens": 31})
	if e := wantGraphError(t, res, body, 400, 100, 0); !strings.Contains(e.Error.Message, "monthly_tokens") {
		t.Fatalf("the refusal does not name the field: %s", body)
	}
	res, body = w.setBudget(t, g, w.c.App.APIKey, map[string]any{"requests_per_minute": 601})
	if e := wantGraphError(t, res, body, 400, 100, 0); !strings.Contains(e.Error.Message, "requests_per_minute") {
		t.Fatalf("the refusal does not name the field: %s", body)
	}
	if res, body = w.setBudget(t, g, w.c.App.APIKey, map[string]any{"monthly_tokens": 0, "requests_per_minute": 0}); res.StatusCode != 200 {
		t.Fatalf("0 (the operator's value): %d %s", res.StatusCode, body)
	}
	res, body = do(t, "GET", g.URL+"/api/v1/graph?node=app/"+w.c.App.ID+"/completions_budget", nil,
		map[string]string{"Authorization": "Bearer " + w.c.App.APIKey})
	if view := decode[budgetView](t, body); res.StatusCode != 200 || view.MonthlyTokens != 30 ||
		view.RequestsPerMinute != 600 || view.Source != "config" {
		t.Fatalf("after the app sent 0: %d %s, want the operator's 30 tokens and 600 a minute", res.StatusCode, body)
	}

	used := 0
	for range 10 {
		c, err := client.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{Model: "fake", Messages: userMessage("Hi")})
		if e, refused := refusal(t, err); refused {
			if e.Code != "budget_exceeded" || !strings.Contains(e.Message, "30 tokens") {
				t.Fatalf("refusal %+v", e)
			}
			break
		}
		used += int(c.Usage.TotalTokens)
	}
	if used != 30 {
		t.Fatalf("%d tokens used under the operator's budget of 30", used)
	}

	// Lower than the operator's is the app's own.
	if res, body = w.setBudget(t, g, w.c.App.APIKey, map[string]any{"requests_per_minute": 5}); res.StatusCode != 200 {
		t.Fatalf("a lower rate: %d %s", res.StatusCode, body)
	}
	res, body = do(t, "GET", g.URL+"/api/v1/graph?node=app/"+w.c.App.ID+"/completions_budget", nil,
		map[string]string{"Authorization": "Bearer " + w.c.App.APIKey})
	if view := decode[budgetView](t, body); res.StatusCode != 200 || view.RequestsPerMinute != 5 ||
		view.MonthlyTokens != 30 || view.Source != "app" {
		t.Fatalf("after a lower rate: %d %s", res.StatusCode, body)
	}
}

// CONTRACT §20: the assistant of a Page never tells consumers about the
// platform's models. With no language model configured, the first reply
// is the Page's own fallback, attributed "<Page> · <assistant label>".
func TestWithoutAConfiguredModelTheAssistantsFirstReplyIsThePagesOwnFallback(t *testing.T) {
	t.Parallel()
	w := newChatWorld(t) // no completions upstreams: only svc-builtin
	w.setPage(t, map[string]any{"inbox_automation": true})
	cid, _ := w.write(t, "Are you open today?")
	eventually(t, "the assistant's reply", func() bool {
		return dbCount(t, w.db, "SELECT count(*) FROM svcchat.messages WHERE sender = 'svc_ai' AND conversation_id = $1", cid) > 0
	})
	res, body := w.mobileGet(t, w.consumer, "threads/"+cid)
	th := decode[thread](t, body)
	want := "Thanks for your message! Someone from " + w.c.Page.Name + " will get back to you soon."
	if res.StatusCode != 200 || len(th.Messages) != 2 || th.Messages[1].Text != want || th.Messages[1].SenderLabel != w.c.Page.Name+" · Assistant" {
		t.Fatalf("thread: %d %s", res.StatusCode, body)
	}
}
