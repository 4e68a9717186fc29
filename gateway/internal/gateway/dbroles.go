package gateway

import (
	"context"
	"encoding/hex"
	"errors"
	"log/slog"
	"sync"

	"github.com/svcplatform/svc/gateway/internal/secretbox"
	"github.com/svcplatform/svc/gateway/internal/store"
)

// embeddedPassword is the embedded cluster's superuser password: derived
// from the master key, so it is never stored and a restored backup (which
// carries the key file) opens with it.
func embeddedPassword(box *secretbox.Box) string {
	return hex.EncodeToString(box.Derive("embedded database superuser"))
}

// sharedRolesOnce says once per process that plugins share the gateway's
// database role.
var sharedRolesOnce sync.Once

// pluginDatabaseURL is the URL plugin connects with: its own role, owning
// only its schema (store.PluginURL). On an external database whose role may
// not create roles, plugins share the gateway's URL and the operator is told
// how to isolate them.
func pluginDatabaseURL(ctx context.Context, db *store.Store, box *secretbox.Box, plugin string, log *slog.Logger) (string, error) {
	u, err := db.PluginURL(ctx, plugin, box.Derive("database role of plugin "+plugin))
	if errors.Is(err, store.ErrNoRoles) {
		sharedRolesOnce.Do(func() {
			log.Warn("plugins share the gateway's database role", "why", err.Error())
		})
		return db.URL, nil
	}
	return u, err
}
