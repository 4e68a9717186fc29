package host

import (
	"context"
	"fmt"
	"io"
	"log"
	"log/slog"
	"strings"

	"github.com/hashicorp/go-hclog"
)

// hclogAdapter lets go-plugin log through the gateway's slog logger. go-plugin
// logs two kinds of lines: its own (start, handshake, exit), which are
// detail at any level below warning, and the plugin's stderr lines, which it
// hands to a logger named after the binary, already parsed from the SDK's
// JSON, and which keep their level.
type hclogAdapter struct {
	log    *slog.Logger
	name   string // "" for go-plugin itself
	binary string // the plugin's file name: go-plugin names its stderr logger so
	args   []any
}

var _ hclog.Logger = (*hclogAdapter)(nil)

func newHCLog(l *slog.Logger, binary string) *hclogAdapter {
	return &hclogAdapter{log: l, binary: binary}
}

func (a *hclogAdapter) fromPlugin() bool { return a.name == a.binary }

func (a *hclogAdapter) level(l hclog.Level) slog.Level {
	switch {
	case l >= hclog.Error:
		return slog.LevelError
	case l == hclog.Warn:
		return slog.LevelWarn
	case l == hclog.Info && a.fromPlugin():
		return slog.LevelInfo
	}
	return slog.LevelDebug
}

// Log writes one line. The plugin's lines carry the timestamp go-plugin
// parsed from them; slog adds its own, so that one is dropped.
func (a *hclogAdapter) Log(l hclog.Level, msg string, args ...any) {
	lvl := a.level(l)
	ctx := context.Background()
	if !a.log.Enabled(ctx, lvl) {
		return
	}
	attrs := make([]any, 0, len(a.args)+len(args)+2)
	if !a.fromPlugin() {
		attrs = append(attrs, "source", "go-plugin")
	}
	attrs = append(attrs, a.args...)
	for i := 0; i+1 < len(args); i += 2 {
		k := fmt.Sprint(args[i])
		switch {
		case k == "timestamp" && a.fromPlugin():
			continue
		case k == "plugin" && !a.fromPlugin():
			// go-plugin's "plugin" is the binary's path; ours is the name.
			k = "binary"
		}
		attrs = append(attrs, k, args[i+1])
	}
	a.log.Log(ctx, lvl, msg, attrs...)
}

func (a *hclogAdapter) Trace(msg string, args ...any) { a.Log(hclog.Trace, msg, args...) }
func (a *hclogAdapter) Debug(msg string, args ...any) { a.Log(hclog.Debug, msg, args...) }
func (a *hclogAdapter) Info(msg string, args ...any)  { a.Log(hclog.Info, msg, args...) }
func (a *hclogAdapter) Warn(msg string, args ...any)  { a.Log(hclog.Warn, msg, args...) }
func (a *hclogAdapter) Error(msg string, args ...any) { a.Log(hclog.Error, msg, args...) }

func (a *hclogAdapter) enabled(l hclog.Level) bool {
	return a.log.Enabled(context.Background(), a.level(l))
}

func (a *hclogAdapter) IsTrace() bool { return a.enabled(hclog.Trace) }
func (a *hclogAdapter) IsDebug() bool { return a.enabled(hclog.Debug) }
func (a *hclogAdapter) IsInfo() bool  { return a.enabled(hclog.Info) }
func (a *hclogAdapter) IsWarn() bool  { return a.enabled(hclog.Warn) }
func (a *hclogAdapter) IsError() bool { return a.enabled(hclog.Error) }

func (a *hclogAdapter) ImpliedArgs() []any { return a.args }

func (a *hclogAdapter) With(args ...any) hclog.Logger {
	c := *a
	c.args = append(append([]any(nil), a.args...), args...)
	return &c
}

func (a *hclogAdapter) Name() string { return a.name }

func (a *hclogAdapter) Named(name string) hclog.Logger {
	c := *a
	if c.name != "" {
		name = c.name + "." + name
	}
	c.name = name
	return &c
}

func (a *hclogAdapter) ResetNamed(name string) hclog.Logger {
	c := *a
	c.name = name
	return &c
}

// SetLevel is ignored: the slog handler owns the level.
func (a *hclogAdapter) SetLevel(hclog.Level) {}

// GetLevel reports the lowest level worth sending, so go-plugin skips
// parsing plugin lines nobody will see.
func (a *hclogAdapter) GetLevel() hclog.Level {
	for _, l := range []hclog.Level{hclog.Debug, hclog.Info, hclog.Warn} {
		if a.enabled(l) {
			return l
		}
	}
	return hclog.Error
}

func (a *hclogAdapter) StandardLogger(opts *hclog.StandardLoggerOptions) *log.Logger {
	return log.New(a.StandardWriter(opts), "", 0)
}

func (a *hclogAdapter) StandardWriter(*hclog.StandardLoggerOptions) io.Writer {
	return writerFunc(func(p []byte) (int, error) {
		a.Info(strings.TrimRight(string(p), "\n"))
		return len(p), nil
	})
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
