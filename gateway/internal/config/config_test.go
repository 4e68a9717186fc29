package config

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestFlagsWinOverTheFileAndSecretsComeFromTheEnvironment(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "c.json")
	if err := os.WriteFile(file, []byte(`{"addr":"127.0.0.1:9000","log_level":"warn","rate_limits":{"app":5}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := Parse([]string{"--config", file, "--addr", "127.0.0.1:9100"},
		env(map[string]string{"SVC_DATABASE_URL": "postgres://x", "SVC_ADMIN_TOKEN": "adm"}), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Addr != "127.0.0.1:9100" || cfg.LogLevel != "warn" || cfg.RateLimits.App != 5 {
		t.Fatalf("cfg = %+v", cfg)
	}
	if cfg.PublicURL != "http://127.0.0.1:9100" || cfg.DatabaseURL != "postgres://x" || cfg.AdminToken != "adm" {
		t.Fatalf("derived or secret settings wrong: %+v", cfg)
	}
	if !filepath.IsAbs(cfg.DataDir) || !filepath.IsAbs(cfg.PluginsDir) {
		t.Fatalf("folders are not absolute: %+v", cfg)
	}
}

func TestBadSettingsAreRefusedClearly(t *testing.T) {
	t.Parallel()
	unknown := filepath.Join(t.TempDir(), "u.json")
	_ = os.WriteFile(unknown, []byte(`{"adress":"x"}`), 0o600)
	cases := map[string][]string{
		"addr":             {"--addr", "nope"},
		"public-url":       {"--public-url", "ftp://x"},
		"tls-cert":         {"--tls-cert", "a.pem"},
		"log-level":        {"--log-level", "loud"},
		"adress":           {"--config", unknown},
		"unexpected":       {"extra"},
		"tracing-endpoint": {"--tracing-endpoint", "localhost:4318"},
	}
	for want, args := range cases {
		_, err := Parse(args, env(nil), io.Discard)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%v: err = %v, want one naming %q", args, err, want)
		}
	}
}

func TestPublicURLDefaultsFromTheListenAddress(t *testing.T) {
	t.Parallel()
	cfg, err := Parse([]string{"--addr", "0.0.0.0:8443", "--tls-cert", "c", "--tls-key", "k"}, env(nil), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.PublicURL != "https://127.0.0.1:8443" {
		t.Fatalf("public URL = %q", cfg.PublicURL)
	}
}

func TestEverySettingComesFromAFlagTheEnvironmentOrTheFile(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "c.json")
	if err := os.WriteFile(file, []byte(`{"log_level":"warn","rate_limits":{"app":5,"user":6},"plugin_pins":{"book":"`+strings.Repeat("a", 64)+`"}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	sum := strings.Repeat("b", 64)
	cfg, err := Parse([]string{"--config", file, "--rate-limit-user", "7"}, env(map[string]string{
		"SVC_LOG_LEVEL":       "debug",         // the environment wins over the file
		"SVC_RATE_LIMIT_USER": "8",             // a flag wins over the environment
		"SVC_RATE_LIMIT_PAGE": "-1",            // settings only the file had before
		"SVC_PLUGIN_PIN":      "hello=" + sum,  // pins by environment, beside the file's
		"SVC_DATA_DIR":        "/srv/svc/data", // every flag has its variable
		"SVC_NO_DEV_SEED":     "true",
	}), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.LogLevel != "debug" || cfg.RateLimits.App != 5 || cfg.RateLimits.User != 7 || cfg.RateLimits.Page != -1 {
		t.Fatalf("precedence: %+v", cfg)
	}
	if cfg.PluginPins["book"] != strings.Repeat("a", 64) || cfg.PluginPins["hello"] != sum {
		t.Fatalf("pins: %v", cfg.PluginPins)
	}
	if cfg.DataDir != "/srv/svc/data" || !cfg.NoDevSeed || *cfg.WebhookAllowLoopback {
		t.Fatalf("data dir, seed or loopback default: %+v", cfg)
	}
	if _, err := Parse(nil, env(map[string]string{"SVC_RATE_LIMIT_APP": "many"}), io.Discard); err == nil ||
		!strings.Contains(err.Error(), "SVC_RATE_LIMIT_APP") {
		t.Fatalf("a bad variable is refused naming it: %v", err)
	}
	if EnvName("webhook-allow-private-networks") != "SVC_WEBHOOK_ALLOW_PRIVATE_NETWORKS" {
		t.Fatal("EnvName")
	}
}

func TestRetentionComesFromTheFileAndFlagsAsGoDurations(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "c.json")
	if err := os.WriteFile(file, []byte(`{"retention":{"events":"2h","deliveries":"48h"}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := Parse([]string{"--config", file, "--retain-deliveries", "72h"}, env(map[string]string{"SVC_PRUNE_INTERVAL": "30s"}), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	r := cfg.Retention
	if r.Events != Duration(2*time.Hour) || r.Deliveries != Duration(72*time.Hour) || r.Interval != Duration(30*time.Second) || r.IdempotencyKeys != 0 {
		t.Fatalf("retention = %+v", r)
	}
	bad := filepath.Join(t.TempDir(), "b.json")
	_ = os.WriteFile(bad, []byte(`{"retention":{"events":"a week"}}`), 0o600)
	if _, err := Parse([]string{"--config", bad}, env(nil), io.Discard); err == nil || !strings.Contains(err.Error(), "a week") {
		t.Fatalf("a bad duration: err = %v", err)
	}
}

func TestTheReadReplicaComesFromTheEnvironmentTheFileOrFlags(t *testing.T) {
	t.Parallel()
	cfg, err := Parse(nil, env(nil), io.Discard)
	if err != nil || cfg.Replica != (Replica{}) {
		t.Fatalf("no replica is configured by default: %+v, %v", cfg.Replica, err)
	}
	cfg, err = Parse(nil, env(map[string]string{"SVC_DATABASE_REPLICA_URL": "postgres://r/svc", "SVC_REPLICA_MAX_LAG": "2s"}), io.Discard)
	if err != nil || cfg.Replica.URL != "postgres://r/svc" || time.Duration(cfg.Replica.MaxLag) != 2*time.Second {
		t.Fatalf("from the environment: %+v, %v", cfg.Replica, err)
	}
	file := filepath.Join(t.TempDir(), "c.json")
	if err := os.WriteFile(file, []byte(`{"replica":{"url":"postgres://file/svc","max_lag":"9s","max_lag_bytes":1024}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err = Parse([]string{"--config", file, "--replica-max-lag-bytes", "2048"}, env(nil), io.Discard)
	want := Replica{URL: "postgres://file/svc", MaxLag: Duration(9 * time.Second), MaxLagBytes: 2048}
	if err != nil || cfg.Replica != want {
		t.Fatalf("file and flag: %+v, %v; want %+v", cfg.Replica, err, want)
	}
}

func TestABadReadReplicaSettingIsRefusedWithoutEchoingTheURL(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"--database-replica-url", "mysql://user:secret@h/db"},
		{"--replica-max-lag-bytes", "-1"},
	} {
		_, err := Parse(args, env(nil), io.Discard)
		if err == nil || !strings.Contains(err.Error(), "replica") || strings.Contains(err.Error(), "secret") {
			t.Errorf("%v: err = %v", args, err)
		}
	}
}

func TestTracingEndpointComesFromTheEnvironmentLikeEveryFlag(t *testing.T) {
	t.Parallel()
	cfg, err := Parse(nil, env(map[string]string{"SVC_TRACING_ENDPOINT": "http://127.0.0.1:4318"}), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.TracingEndpoint != "http://127.0.0.1:4318" {
		t.Fatalf("tracing endpoint = %q", cfg.TracingEndpoint)
	}
}

// SVC_CONFIG names the file as --config does (issue 28: it was ignored,
// and the completions upstreams of the file vanished); the flag wins.
func TestSVCConfigIsReadAsConfig(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fromEnv, fromFlag := filepath.Join(dir, "env.json"), filepath.Join(dir, "flag.json")
	_ = os.WriteFile(fromEnv, []byte(`{"log_level":"warn","completions":{"upstreams":[{"name":"u","base_url":"http://127.0.0.1:1/v1","models":["m"]}]}}`), 0o600)
	_ = os.WriteFile(fromFlag, []byte(`{"log_level":"error"}`), 0o600)
	cfg, err := Parse(nil, env(map[string]string{"SVC_CONFIG": fromEnv}), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.LogLevel != "warn" || !strings.Contains(string(cfg.Plugins["completions"]), `"upstreams"`) {
		t.Fatalf("SVC_CONFIG was not read: %+v", cfg)
	}
	cfg, err = Parse([]string{"--config", fromFlag}, env(map[string]string{"SVC_CONFIG": fromEnv}), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.LogLevel != "error" {
		t.Fatalf("--config did not win over SVC_CONFIG: %+v", cfg)
	}
}

// The access log is on by default and --access-log / SVC_ACCESS_LOG turn
// it off; anything but on or off is refused.
func TestTheAccessLogIsOnByDefaultAndConfigurable(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		env  map[string]string
		want string
	}{
		{nil, nil, "on"},
		{[]string{"--access-log", "off"}, nil, "off"},
		{nil, map[string]string{"SVC_ACCESS_LOG": "off"}, "off"},
	} {
		cfg, err := Parse(c.args, env(c.env), io.Discard)
		if err != nil || cfg.AccessLog != c.want {
			t.Errorf("%v %v: access log %q, %v; want %q", c.args, c.env, cfg.AccessLog, err, c.want)
		}
	}
	if _, err := Parse([]string{"--access-log", "maybe"}, env(nil), io.Discard); err == nil || !strings.Contains(err.Error(), "--access-log") {
		t.Fatalf("--access-log maybe: %v", err)
	}
}

func TestSignUpIsOpenByDefaultAndClosedByFlagVariableOrFile(t *testing.T) {
	t.Parallel()
	none := env(map[string]string{})
	if cfg, err := Parse(nil, none, io.Discard); err != nil || cfg.SignUp != "open" {
		t.Fatalf("default: %q, %v", cfg.SignUp, err)
	}
	if cfg, err := Parse([]string{"--signup", "closed"}, none, io.Discard); err != nil || cfg.SignUp != "closed" {
		t.Fatalf("flag: %q, %v", cfg.SignUp, err)
	}
	if cfg, err := Parse(nil, env(map[string]string{"SVC_SIGNUP": "closed"}), io.Discard); err != nil || cfg.SignUp != "closed" {
		t.Fatalf("SVC_SIGNUP: %q, %v", cfg.SignUp, err)
	}
	file := filepath.Join(t.TempDir(), "c.json")
	if err := os.WriteFile(file, []byte(`{"signup":"closed"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if cfg, err := Parse([]string{"--config", file}, none, io.Discard); err != nil || cfg.SignUp != "closed" {
		t.Fatalf("file: %q, %v", cfg.SignUp, err)
	}
	if _, err := Parse([]string{"--signup", "invite-only"}, none, io.Discard); err == nil || !strings.Contains(err.Error(), "--signup") {
		t.Fatalf("an unknown value is refused naming the flag: %v", err)
	}
}

// A plugin's settings are plugins.<name>, passed to it as they are with
// the variables its settings name in keys ending in _env; the old
// "completions" key is read as plugins.completions, and naming both is
// refused.
func TestPluginSettingsArePassedToTheirPlugin(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, body string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	lookup := func(name string) (string, bool) {
		v, ok := map[string]string{"KEY_A": "a", "KEY_B": "b", "OTHER": "x"}[name]
		return v, ok
	}
	section := `{"upstreams": [{"name": "u", "api_key_env": "KEY_A"}, {"name": "v", "api_key_env": "KEY_B"}, {"name": "w", "api_key_env": "MISSING"}]}`
	for _, file := range []string{
		write("new.json", `{"plugins": {"completions": `+section+`}}`),
		write("old.json", `{"completions": `+section+`}`),
	} {
		cfg, err := Parse([]string{"--config", file}, env(nil), io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		got := cfg.PluginEnv("completions", lookup)
		want := []string{EnvPluginConfig + `={"upstreams":[{"name":"u","api_key_env":"KEY_A"},{"name":"v","api_key_env":"KEY_B"},{"name":"w","api_key_env":"MISSING"}]}`, "KEY_A=a", "KEY_B=b"}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s: env %q, want %q", file, got, want)
		}
		if other := cfg.PluginEnv("book", lookup); other != nil {
			t.Errorf("%s: a plugin without settings gets %q", file, other)
		}
	}
	if _, err := Parse([]string{"--config", write("both.json", `{"completions": {}, "plugins": {"completions": {}}}`)}, env(nil), io.Discard); err == nil {
		t.Error("completions and plugins.completions together were accepted")
	}
	if _, err := Parse([]string{"--config", write("list.json", `{"plugins": {"book": [1]}}`)}, env(nil), io.Discard); err == nil || !strings.Contains(err.Error(), "plugins.book") {
		t.Errorf("settings that are not an object: %v", err)
	}
}
