package pluginrt

import (
	"io"
	"log/slog"
	"os"
	"strings"
)

// newLogger returns the plugin's logger: JSON lines on w (the process's real
// stderr). The keys are go-plugin's (@level, @message, @timestamp), so the
// gateway logs each line at its level with its attributes instead of as
// opaque text.
func newLogger(w io.Writer) *slog.Logger {
	level := slog.LevelInfo
	if strings.EqualFold(os.Getenv("SVC_PLUGIN_LOG_LEVEL"), "debug") {
		level = slog.LevelDebug
	}
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{
		Level: level,
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if len(groups) > 0 {
				return a
			}
			switch a.Key {
			case slog.TimeKey:
				return slog.String("@timestamp", a.Value.Time().Format("2006-01-02T15:04:05.000000Z07:00"))
			case slog.LevelKey:
				return slog.String("@level", levelName(a.Value.Any()))
			case slog.MessageKey:
				return slog.Attr{Key: "@message", Value: a.Value}
			}
			return a
		},
	}))
}

func levelName(v any) string {
	l, ok := v.(slog.Level)
	if !ok {
		return "info"
	}
	switch {
	case l < slog.LevelInfo:
		return "debug"
	case l < slog.LevelWarn:
		return "info"
	case l < slog.LevelError:
		return "warn"
	}
	return "error"
}

// stderr is the process's stderr as it was at start. go-plugin's Serve
// replaces os.Stderr with a pipe to its stdio stream; the gateway reads the
// original one.
var stderr = os.Stderr
