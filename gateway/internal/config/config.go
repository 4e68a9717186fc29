package config

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/svcplatform/svc/internal/tracing"
)

// Config is everything the gateway needs to start.
type Config struct {
	// Addr is the host:port the one HTTP port listens on.
	Addr string `json:"addr"`
	// MetricsAddr, when set, serves /metrics on a listener of its own, to
	// whoever reaches it (the operator's network decides who can); the main
	// port then has no /metrics. Unset: /metrics is on the main port, for
	// the admin token only (CONTRACT §15).
	MetricsAddr string `json:"metrics_addr,omitempty"`
	// PublicURL is the address clients use; it is the OAuth issuer and the
	// base_url of the development credentials. Default http://<addr>.
	PublicURL string `json:"public_url"`
	// DataDir holds the embedded PostgreSQL cluster and the dev credentials.
	DataDir string `json:"data_dir"`
	// PluginsDir holds one executable per product plugin.
	PluginsDir string `json:"plugins_dir"`
	// NoDevSeed disables the development seed.
	NoDevSeed bool `json:"no_dev_seed"`
	// SignUp is "open" (anyone may create an account: POST
	// /api/mobile/auth/signup and /signup) or "closed" (refused, 403).
	SignUp string `json:"signup"`
	// TLSCert and TLSKey enable TLS when both are set.
	TLSCert string `json:"tls_cert"`
	TLSKey  string `json:"tls_key"`
	// PluginPins optionally pins plugin binaries by SHA-256 (lowercase hex).
	PluginPins map[string]string `json:"plugin_pins"`
	// RequirePluginIsolation refuses to start a plugin that would run
	// uncontained (isolation "none": neither root nor Landlock).
	RequirePluginIsolation bool `json:"require_plugin_isolation"`
	// LogLevel is debug, info, warn or error.
	LogLevel string `json:"log_level"`
	// AccessLog is "on" (one info line per request: method, path, node,
	// status, error code, duration, trace id, app) or "off".
	AccessLog string `json:"access_log"`
	// WebhookAllowPrivateNetworks lets webhook callbacks reach private and
	// link-local addresses (cloud metadata addresses stay refused).
	WebhookAllowPrivateNetworks bool `json:"webhook_allow_private_networks"`
	// WebhookAllowLoopback lets development-mode apps' callbacks reach this
	// machine's loopback addresses. Unset: allowed while the development
	// world is seeded, refused with --no-dev-seed, so that on a server no
	// signed-in user can make the gateway probe its own ports.
	WebhookAllowLoopback *bool `json:"webhook_allow_loopback,omitempty"`
	// RateLimits are Graph calls allowed per minute per app, user and Page;
	// zero keeps the default, a negative value means unlimited.
	RateLimits RateLimits `json:"rate_limits"`
	// Plugins holds each plugin's settings by the plugin's name
	// (plugins.<name>): a JSON object the gateway does not read, passed as
	// it is to that plugin, which validates it (PluginEnv).
	Plugins map[string]json.RawMessage `json:"plugins,omitempty"`
	// Completions is the key that held the completions plugin's settings
	// before plugins.completions. Deprecated: still read, as
	// plugins.completions (finish moves it there); naming both is refused.
	Completions json.RawMessage `json:"completions,omitempty"`
	// Retention bounds the core tables (gateway/internal/prune); zero
	// fields keep the defaults.
	Retention Retention `json:"retention"`
	// Replica optionally adds a PostgreSQL read replica that serves reads
	// which may lag (docs/design/storage.md, "Read replicas"); none by default.
	Replica Replica `json:"replica"`
	// TracingEndpoint turns on OpenTelemetry tracing: the OTLP/HTTP
	// receiver (http://host:4318) that the gateway's and the plugins'
	// spans go to (internal/tracing). Empty: off.
	TracingEndpoint string `json:"tracing_endpoint,omitempty"`

	// DatabaseURL selects an external PostgreSQL (SVC_DATABASE_URL); empty
	// means the embedded cluster under DataDir.
	DatabaseURL string `json:"-"`
	// AdminToken is the operator's token (SVC_ADMIN_TOKEN); empty means one
	// is generated and kept in the data folder.
	AdminToken string `json:"-"`
}

// Retention says how long the pruning job keeps rows, and how often it runs.
type Retention struct {
	// Events: dispatched outbox events (default 168h).
	Events Duration `json:"events,omitempty"`
	// Deliveries: finished webhook deliveries and their attempts (default 720h).
	Deliveries Duration `json:"deliveries,omitempty"`
	// IdempotencyKeys: replayed write answers (default 24h, CONTRACT §1).
	IdempotencyKeys Duration `json:"idempotency_keys,omitempty"`
	// Interval between pruning rounds (default 10m).
	Interval Duration `json:"interval,omitempty"`
}

// Replica is a read replica of the database: a streaming standby.
type Replica struct {
	// URL is the standby's postgres:// URL with the gateway's role
	// (SVC_DATABASE_REPLICA_URL; prefer the environment or a pgpass file
	// for a password); empty means no replica. Plugins get it with their
	// own role, which the standby has by replication.
	URL string `json:"url,omitempty"`
	// MaxLag is how far behind in time the replica may be and still serve
	// reads (default 5s).
	MaxLag Duration `json:"max_lag,omitempty"`
	// MaxLagBytes is how far behind in WAL bytes (default 16 MiB).
	MaxLagBytes int64 `json:"max_lag_bytes,omitempty"`
}

// Duration is a time.Duration written as Go writes it ("90s", "168h") in
// the config file.
type Duration time.Duration

// UnmarshalJSON reads "90s"-style strings.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("a duration is a string such as \"90s\" or \"168h\": %w", err)
	}
	v, err := time.ParseDuration(s)
	if err != nil || v < 0 {
		return fmt.Errorf("duration %q: want a positive Go duration such as \"90s\" or \"168h\"", s)
	}
	*d = Duration(v)
	return nil
}

// MarshalJSON writes the string form.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// RateLimits are per-minute Graph call limits.
type RateLimits struct {
	App  int `json:"app"`
	User int `json:"user"`
	Page int `json:"page"`
}

// Defaults are the settings with no file, flag or environment.
func Defaults() Config {
	return Config{
		Addr:       "127.0.0.1:8080",
		DataDir:    "./var",
		PluginsDir: "./bin/plugins",
		LogLevel:   "info",
		AccessLog:  "on",
		SignUp:     "open",
	}
}

// Parse reads flags from args (without the program name), the file named
// by --config, and the environment.
func Parse(args []string, getenv func(string) string, stderr io.Writer) (Config, error) {
	// A wrong flag is answered with the flags and where the commands are.
	return parse(args, getenv, stderr, "Usage: gateway [flags], or gateway <command> (gateway help lists them). Flags:")
}

// parse is Parse with the line printed above the flags' defaults when
// they are shown.
func parse(args []string, getenv func(string) string, stderr io.Writer, header string) (Config, error) {
	cfg := Defaults()
	fs := flag.NewFlagSet("gateway", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		if header != "" {
			fmt.Fprintln(fs.Output(), header)
		}
		fs.PrintDefaults()
	}
	file := fs.String("config", "", "optional JSON file with settings (flags win over it; SVC_CONFIG)")
	addr := fs.String("addr", cfg.Addr, "host:port to listen on")
	metricsAddr := fs.String("metrics-addr", "", "serve /metrics on this host:port of its own, without a credential (default: on the main port, admin token only)")
	publicURL := fs.String("public-url", "", "public base URL and OAuth issuer (default http://<addr>)")
	dataDir := fs.String("data-dir", cfg.DataDir, "folder for the embedded database and dev credentials")
	pluginsDir := fs.String("plugins-dir", cfg.PluginsDir, "folder of plugin binaries")
	noSeed := fs.Bool("no-dev-seed", false, "never create the development seed")
	signUp := fs.String("signup", cfg.SignUp, "open: anyone may create an account (/signup, POST /api/mobile/auth/signup); closed: refused")
	requireIsolation := fs.Bool("require-plugin-isolation", false, "refuse to start a plugin that would run uncontained (neither its own user nor a Landlock sandbox)")
	tlsCert := fs.String("tls-cert", "", "TLS certificate file (PEM)")
	tlsKey := fs.String("tls-key", "", "TLS private key file (PEM)")
	logLevel := fs.String("log-level", cfg.LogLevel, "debug, info, warn or error")
	accessLog := fs.String("access-log", cfg.AccessLog, "on: log one line per request at info level (method, path, Graph node, status, error code, duration, trace id, app); off")
	allowPrivate := fs.Bool("webhook-allow-private-networks", false, "let webhook callbacks reach private networks")
	allowLoopback := fs.Bool("webhook-allow-loopback", false, "let development apps' webhook callbacks reach loopback (default: only with the development seed)")
	rateApp := fs.Int("rate-limit-app", 0, "Graph calls per minute per app (0: default, negative: unlimited)")
	rateUser := fs.Int("rate-limit-user", 0, "Graph calls per minute per user (0: default, negative: unlimited)")
	ratePage := fs.Int("rate-limit-page", 0, "Graph calls per minute per Page (0: default, negative: unlimited)")
	retainEvents := fs.Duration("retain-events", 0, "keep dispatched outbox events this long (0: 168h)")
	retainDeliveries := fs.Duration("retain-deliveries", 0, "keep finished webhook deliveries and their attempts this long (0: 720h)")
	retainKeys := fs.Duration("retain-idempotency-keys", 0, "replay a write's answer for its Idempotency-Key this long (0: 24h)")
	pruneInterval := fs.Duration("prune-interval", 0, "time between pruning rounds (0: 10m)")
	replicaURL := fs.String("database-replica-url", "", "postgres:// URL of a streaming read replica serving reads that may lag (default: none)")
	replicaLag := fs.Duration("replica-max-lag", 0, "skip the read replica while it is this far behind (0: 5s)")
	replicaLagBytes := fs.Int64("replica-max-lag-bytes", 0, "skip the read replica while it is this many WAL bytes behind (0: 16 MiB)")
	tracingEndpoint := fs.String("tracing-endpoint", "", "send OpenTelemetry traces to this OTLP/HTTP receiver, e.g. http://127.0.0.1:4318 (default: tracing off)")
	pins := map[string]string{}
	fs.Func("plugin-pin", "pin a plugin binary: name=<sha256 in lowercase hex> (repeatable; SVC_PLUGIN_PIN takes a comma-separated list)", func(v string) error {
		for _, one := range strings.Split(v, ",") {
			name, sum, ok := strings.Cut(strings.TrimSpace(one), "=")
			if !ok || name == "" || len(sum) != 64 {
				return fmt.Errorf("want name=<64 hex digits>, got %q", one)
			}
			pins[name] = strings.ToLower(sum)
		}
		return nil
	})
	if err := fs.Parse(args); err != nil {
		return Config{}, err
	}
	if fs.NArg() > 0 {
		return Config{}, fmt.Errorf("unexpected arguments: %s", strings.Join(fs.Args(), " "))
	}
	// The file too may be named in the environment (SVC_CONFIG), like
	// every flag; the flag wins. It is read first: flags and variables win
	// over it.
	if *file == "" {
		*file = getenv(EnvName("config"))
	}
	if *file != "" {
		if err := readFile(*file, &cfg); err != nil {
			return Config{}, err
		}
	}
	// Every flag may also come from the environment as SVC_<NAME>
	// (--data-dir: SVC_DATA_DIR); a flag given on the command line wins
	// over it, and it wins over the file.
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	var envErr error
	fs.VisitAll(func(f *flag.Flag) {
		if given[f.Name] || f.Name == "config" || envErr != nil {
			return
		}
		name := EnvName(f.Name)
		if v := getenv(name); v != "" {
			if err := fs.Set(f.Name, v); err != nil {
				envErr = fmt.Errorf("%s=%q: %w", name, v, err)
			}
		}
	})
	if envErr != nil {
		return Config{}, envErr
	}
	// Flags (and their environment variables) win over the file.
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "addr":
			cfg.Addr = *addr
		case "metrics-addr":
			cfg.MetricsAddr = *metricsAddr
		case "public-url":
			cfg.PublicURL = *publicURL
		case "data-dir":
			cfg.DataDir = *dataDir
		case "plugins-dir":
			cfg.PluginsDir = *pluginsDir
		case "no-dev-seed":
			cfg.NoDevSeed = *noSeed
		case "signup":
			cfg.SignUp = *signUp
		case "require-plugin-isolation":
			cfg.RequirePluginIsolation = *requireIsolation
		case "tls-cert":
			cfg.TLSCert = *tlsCert
		case "tls-key":
			cfg.TLSKey = *tlsKey
		case "log-level":
			cfg.LogLevel = *logLevel
		case "access-log":
			cfg.AccessLog = *accessLog
		case "webhook-allow-private-networks":
			cfg.WebhookAllowPrivateNetworks = *allowPrivate
		case "webhook-allow-loopback":
			cfg.WebhookAllowLoopback = allowLoopback
		case "rate-limit-app":
			cfg.RateLimits.App = *rateApp
		case "rate-limit-user":
			cfg.RateLimits.User = *rateUser
		case "rate-limit-page":
			cfg.RateLimits.Page = *ratePage
		case "retain-events":
			cfg.Retention.Events = Duration(*retainEvents)
		case "retain-deliveries":
			cfg.Retention.Deliveries = Duration(*retainDeliveries)
		case "retain-idempotency-keys":
			cfg.Retention.IdempotencyKeys = Duration(*retainKeys)
		case "prune-interval":
			cfg.Retention.Interval = Duration(*pruneInterval)
		case "database-replica-url":
			cfg.Replica.URL = *replicaURL
		case "replica-max-lag":
			cfg.Replica.MaxLag = Duration(*replicaLag)
		case "replica-max-lag-bytes":
			cfg.Replica.MaxLagBytes = *replicaLagBytes
		case "tracing-endpoint":
			cfg.TracingEndpoint = *tracingEndpoint
		case "plugin-pin":
			if cfg.PluginPins == nil {
				cfg.PluginPins = map[string]string{}
			}
			for name, sum := range pins {
				cfg.PluginPins[name] = sum
			}
		}
	})
	cfg.DatabaseURL = getenv("SVC_DATABASE_URL")
	cfg.AdminToken = getenv("SVC_ADMIN_TOKEN")
	if cfg.WebhookAllowLoopback == nil {
		dev := !cfg.NoDevSeed
		cfg.WebhookAllowLoopback = &dev
	}
	return cfg, cfg.finish()
}

// PrintDefaults writes the flags with their defaults to w, for `gateway
// help`.
func PrintDefaults(w io.Writer) {
	_, _ = parse([]string{"-h"}, func(string) string { return "" }, w, "")
}

// EnvName is the environment variable of a flag: SVC_ and the flag's name
// in upper case with - as _ (data-dir: SVC_DATA_DIR).
func EnvName(flagName string) string {
	return "SVC_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

func readFile(path string, cfg *Config) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("read config: %w", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(cfg); err != nil {
		return fmt.Errorf("config file %s: %w", path, err)
	}
	return nil
}

// finish validates the settings and fills in derived defaults.
func (c *Config) finish() error {
	if c.MetricsAddr != "" {
		if _, _, err := net.SplitHostPort(c.MetricsAddr); err != nil {
			return fmt.Errorf("--metrics-addr %q: %w", c.MetricsAddr, err)
		}
	}
	host, port, err := net.SplitHostPort(c.Addr)
	if err != nil {
		return fmt.Errorf("--addr %q: %w", c.Addr, err)
	}
	if err := tracing.CheckEndpoint(c.TracingEndpoint); err != nil {
		return fmt.Errorf("--tracing-endpoint: %w", err)
	}
	if (c.TLSCert == "") != (c.TLSKey == "") {
		return errors.New("--tls-cert and --tls-key must be given together")
	}
	if c.PublicURL == "" {
		scheme := "http"
		if c.TLSCert != "" {
			scheme = "https"
		}
		if host == "" || host == "0.0.0.0" || host == "::" {
			host = "127.0.0.1"
		}
		c.PublicURL = scheme + "://" + net.JoinHostPort(host, port)
	}
	u, err := url.Parse(c.PublicURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("--public-url %q must be an absolute http(s) URL", c.PublicURL)
	}
	c.PublicURL = strings.TrimRight(c.PublicURL, "/")
	if c.Replica.MaxLag < 0 || c.Replica.MaxLagBytes < 0 {
		return errors.New("--replica-max-lag and --replica-max-lag-bytes must not be negative")
	}
	if c.Replica.URL != "" {
		if u, err := url.Parse(c.Replica.URL); err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
			// Not echoed: it may hold a password.
			return errors.New("--database-replica-url must be a postgres:// URL")
		}
	}
	if err := c.movePluginSettings(); err != nil {
		return err
	}
	if c.SignUp != "open" && c.SignUp != "closed" {
		return fmt.Errorf("--signup %q: want open or closed", c.SignUp)
	}
	if c.AccessLog != "on" && c.AccessLog != "off" {
		return fmt.Errorf("--access-log %q: want on or off", c.AccessLog)
	}
	switch c.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		return fmt.Errorf("--log-level %q: want debug, info, warn or error", c.LogLevel)
	}
	for _, dir := range []*string{&c.DataDir, &c.PluginsDir} {
		abs, err := filepath.Abs(*dir)
		if err != nil {
			return err
		}
		*dir = abs
	}
	return nil
}
