// Package prune is the periodic pruning loop that the plugins share: each
// plugin bounds its own tables (the gateway's job prunes only core's), by
// running its delete statements on an interval for as long as it lives.
package prune

import (
	"context"
	"log/slog"
	"time"
)

// Every runs round every interval until ctx ends; a failed round is logged
// as a warning and the next one tries again. Every blocks: start it with go.
func Every(ctx context.Context, interval time.Duration, log *slog.Logger, round func(context.Context) error) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := round(ctx); err != nil && ctx.Err() == nil {
				log.Warn("old rows not pruned", "error", err)
			}
		}
	}
}
