package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"
)

// EnvConfig is the environment variable in which the gateway passes a
// plugin its settings, plugins.<name> of its config file; for this one
// {"upstreams":[…],"budget":{…}} (the gateway's old "completions" key is
// read as plugins.completions).
const EnvConfig = "SVC_PLUGIN_CONFIG"

// defaultTimeout bounds an upstream call that names no timeout.
const defaultTimeout = 60 * time.Second

// config is the completions plugin's settings, plugins.completions of the
// gateway's config file.
type config struct {
	Upstreams []upstreamConfig `json:"upstreams"`
	// Budget is every app's default budget and rate limit, and a ceiling:
	// an app's own (app/<id>/completions_budget) may only be lower.
	Budget budgetConfig `json:"budget"`
}

// budgetConfig is a budget and a rate limit; 0 or absent means none.
type budgetConfig struct {
	MonthlyTokens     int64 `json:"monthly_tokens"`
	RequestsPerMinute int64 `json:"requests_per_minute"`
}

// upstreamConfig is one OpenAI-compatible server.
type upstreamConfig struct {
	// Name identifies the upstream in logs, metrics and usage.
	Name string `json:"name"`
	// BaseURL is the server's OpenAI base URL, the part before
	// /chat/completions, e.g. http://127.0.0.1:11434/v1 for Ollama.
	BaseURL string `json:"base_url"`
	// APIKeyEnv names the environment variable holding the API key; empty
	// for servers that take none.
	APIKeyEnv string `json:"api_key_env"`
	// Models are the model ids this upstream serves.
	Models []string `json:"models"`
	// Weight shares a model's requests among its upstreams; default 1.
	Weight int `json:"weight"`
	// Timeout bounds a call that is not streamed, until the whole answer,
	// e.g. "30s"; default 60s. A request never waits more than the
	// timeouts of its model's upstreams added up.
	Timeout string `json:"timeout"`
	// TTFTTimeout bounds a streamed call until its first token (a chunk
	// with text, a finish reason or usage), and then each wait for the
	// next event: an upstream that does not send its first token in time
	// is left for the next one; one that stalls mid-answer is cut. Default:
	// Timeout.
	TTFTTimeout string `json:"ttft_timeout"`
	// Cooldown is how long the breaker keeps a failing upstream out before
	// probing it with a one-token generation; default 30s.
	Cooldown string `json:"cooldown"`
}

// duration reads an optional positive duration setting.
func duration(field, v string, def time.Duration) (time.Duration, error) {
	if v == "" {
		return def, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%s %q: want a positive duration such as \"30s\"", field, v)
	}
	return d, nil
}

// parseConfig reads the JSON of EnvConfig; empty means no upstream and no
// default budget.
func parseConfig(raw string, getenv func(string) string) ([]*upstream, limits, error) {
	if strings.TrimSpace(raw) == "" {
		return nil, limits{}, nil
	}
	var c config
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return nil, limits{}, fmt.Errorf("%s: %w", EnvConfig, err)
	}
	if c.Budget.MonthlyTokens < 0 || c.Budget.RequestsPerMinute < 0 {
		return nil, limits{}, errors.New("completions.budget: limits must not be negative (0 means none)")
	}
	budget := limits{monthlyTokens: c.Budget.MonthlyTokens, requestsPerMinute: c.Budget.RequestsPerMinute}
	ups, err := parseUpstreams(c.Upstreams, getenv)
	return ups, budget, err
}

func parseUpstreams(cfgs []upstreamConfig, getenv func(string) string) ([]*upstream, error) {
	seen := map[string]bool{}
	var out []*upstream
	for i, uc := range cfgs {
		u, err := newUpstream(uc, getenv)
		if err != nil {
			return nil, fmt.Errorf("completions.upstreams[%d]: %w", i, err)
		}
		if seen[u.name] {
			return nil, fmt.Errorf("completions.upstreams[%d]: the name %q is used twice", i, u.name)
		}
		seen[u.name] = true
		out = append(out, u)
	}
	return out, nil
}

// newUpstream checks one upstream's settings and reads its API key.
func newUpstream(c upstreamConfig, getenv func(string) string) (*upstream, error) {
	if c.Name == "" || c.Name == builtinModel {
		return nil, fmt.Errorf("name %q: give each upstream a name (not %s)", c.Name, builtinModel)
	}
	base, err := url.Parse(strings.TrimRight(c.BaseURL, "/"))
	if err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" {
		return nil, fmt.Errorf("base_url %q must be an absolute http(s) URL", c.BaseURL)
	}
	if len(c.Models) == 0 {
		return nil, errors.New("models: list the model ids it serves")
	}
	for _, m := range c.Models {
		if m == "" || m == builtinModel {
			return nil, fmt.Errorf("models: %q cannot be served by an upstream", m)
		}
	}
	if c.Weight < 0 {
		return nil, fmt.Errorf("weight %d must not be negative", c.Weight)
	}
	timeout, err := duration("timeout", c.Timeout, defaultTimeout)
	if err != nil {
		return nil, err
	}
	ttft, err := duration("ttft_timeout", c.TTFTTimeout, timeout)
	if err != nil {
		return nil, err
	}
	cooldown, err := duration("cooldown", c.Cooldown, breakerCooldown)
	if err != nil {
		return nil, err
	}
	u := &upstream{
		name: c.Name, url: base.String() + "/chat/completions", models: c.Models,
		weight: max(c.Weight, 1), timeout: timeout, ttft: ttft,
		breaker: &breaker{threshold: breakerThreshold, cooldown: cooldown},
	}
	if c.APIKeyEnv != "" {
		u.key = getenv(c.APIKeyEnv)
		if u.key == "" {
			return nil, fmt.Errorf("api_key_env: the environment variable %s is empty or not set", c.APIKeyEnv)
		}
	}
	return u, nil
}
