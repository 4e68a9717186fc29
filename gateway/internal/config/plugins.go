package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
)

// EnvPluginConfig is the environment variable in which a plugin gets its
// settings, plugins.<name> of the configuration, as JSON; unset when the
// configuration has none for it.
const EnvPluginConfig = "SVC_PLUGIN_CONFIG"

// PluginEnv is the environment the configuration adds to plugin name's:
// its settings in EnvPluginConfig and, since secrets stay out of the file,
// the gateway's variables that its settings name: every string value of a
// key ending in "_env" (an upstream's "api_key_env": "OPENAI_API_KEY") is
// the name of a variable passed along when the gateway has it. Plugins get
// a scrubbed environment otherwise (package host).
func (c Config) PluginEnv(name string, lookupEnv func(string) (string, bool)) []string {
	raw := c.Plugins[name]
	if len(raw) == 0 {
		return nil
	}
	env := []string{EnvPluginConfig + "=" + string(raw)}
	var settings any
	_ = json.Unmarshal(raw, &settings) // checked by finish
	var names []string
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				if s, ok := x.(string); ok && strings.HasSuffix(k, "_env") && s != "" {
					names = append(names, s)
				}
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(settings)
	sort.Strings(names)
	for i, n := range names {
		if i > 0 && names[i-1] == n {
			continue
		}
		if v, ok := lookupEnv(n); ok {
			env = append(env, n+"="+v)
		}
	}
	return env
}

// movePluginSettings checks that every plugins.<name> is a JSON object and
// moves the old "completions" key to plugins.completions.
func (c *Config) movePluginSettings() error {
	if old := bytes.TrimSpace(c.Completions); len(old) > 0 && !bytes.Equal(old, []byte("null")) {
		if _, both := c.Plugins["completions"]; both {
			return errors.New(`config: "completions" is the old name of "plugins": {"completions": …}; give one of them`)
		}
		if c.Plugins == nil {
			c.Plugins = map[string]json.RawMessage{}
		}
		c.Plugins["completions"] = old
	}
	c.Completions = nil
	for name, raw := range c.Plugins {
		raw = bytes.TrimSpace(raw)
		if bytes.Equal(raw, []byte("null")) {
			delete(c.Plugins, name)
			continue
		}
		var obj map[string]json.RawMessage
		if name == "" || json.Unmarshal(raw, &obj) != nil {
			return fmt.Errorf("config: plugins.%s: want a JSON object of the plugin's settings", name)
		}
		// One line: it travels in an environment variable.
		var compact bytes.Buffer
		if err := json.Compact(&compact, raw); err != nil {
			return fmt.Errorf("config: plugins.%s: %w", name, err)
		}
		c.Plugins[name] = compact.Bytes()
	}
	return nil
}
