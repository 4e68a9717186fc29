package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"
)

// EnvConfig is the environment variable in which the gateway passes this
// plugin its part of the config file: {"upstreams":[…]}.
const EnvConfig = "SVC_COMPLETIONS_CONFIG"

// defaultTimeout bounds an upstream call that names no timeout.
const defaultTimeout = 60 * time.Second

// config is the completions section of the gateway's config file.
type config struct {
	Upstreams []upstreamConfig `json:"upstreams"`
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
	// Timeout bounds a call until the first byte of the answer (the whole
	// answer when it is not streamed), e.g. "30s"; default 60s.
	Timeout string `json:"timeout"`
}

// parseConfig reads the JSON of EnvConfig; empty means no upstream.
func parseConfig(raw string, getenv func(string) string) ([]*upstream, error) {
	if strings.TrimSpace(raw) == "" {
		return nil, nil
	}
	var c config
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("%s: %w", EnvConfig, err)
	}
	seen := map[string]bool{}
	var out []*upstream
	for i, uc := range c.Upstreams {
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
	timeout := defaultTimeout
	if c.Timeout != "" {
		if timeout, err = time.ParseDuration(c.Timeout); err != nil || timeout <= 0 {
			return nil, fmt.Errorf("timeout %q: want a positive duration such as \"30s\"", c.Timeout)
		}
	}
	u := &upstream{
		name: c.Name, url: base.String() + "/chat/completions", models: c.Models,
		weight: max(c.Weight, 1), timeout: timeout,
		breaker: &breaker{threshold: breakerThreshold, cooldown: breakerCooldown},
	}
	if c.APIKeyEnv != "" {
		u.key = getenv(c.APIKeyEnv)
		if u.key == "" {
			return nil, fmt.Errorf("api_key_env: the environment variable %s is empty or not set", c.APIKeyEnv)
		}
	}
	return u, nil
}
