package host

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"slices"
	"strings"
)

// forwardStderr logs each line plugin process writes on its stderr
// through the gateway's logger until r ends, keeping the last bytes in
// tail. The SDK writes JSON lines (@level, @message, @timestamp and the
// attributes, go-plugin's keys): each is logged at its level with its
// attributes, its timestamp dropped for slog's own. Any other line (a Go
// panic's trace, a partner's own prints) is logged at debug level, as
// text.
func forwardStderr(log *slog.Logger, r io.Reader, tail io.Writer) {
	br := bufio.NewReaderSize(r, 16<<10)
	for {
		line, err := br.ReadString('\n')
		if line != "" {
			_, _ = io.WriteString(tail, line)
			logPluginLine(log, strings.TrimRight(line, "\r\n"))
		}
		if err != nil {
			return
		}
	}
}

func logPluginLine(log *slog.Logger, line string) {
	ctx := context.Background()
	var fields map[string]any
	if !strings.HasPrefix(line, "{") || json.Unmarshal([]byte(line), &fields) != nil {
		if line != "" && log.Enabled(ctx, slog.LevelDebug) {
			log.Debug(line)
		}
		return
	}
	lvl := pluginLevel(fields["@level"])
	if !log.Enabled(ctx, lvl) {
		return
	}
	msg, _ := fields["@message"].(string)
	keys := make([]string, 0, len(fields))
	for k := range fields {
		if !strings.HasPrefix(k, "@") {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	attrs := make([]any, 0, 2*len(keys))
	for _, k := range keys {
		attrs = append(attrs, k, fields[k])
	}
	log.Log(ctx, lvl, msg, attrs...)
}

func pluginLevel(v any) slog.Level {
	switch s, _ := v.(string); strings.ToLower(s) {
	case "error":
		return slog.LevelError
	case "warn", "warning":
		return slog.LevelWarn
	case "info":
		return slog.LevelInfo
	}
	return slog.LevelDebug
}
