package migrate

import (
	"context"
	"fmt"
	"io/fs"
	"os"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/svcplatform/svc/internal/tracing"
)

// EnvDatabaseURL names the variable in which the gateway hands its plugins
// the database URL.
const EnvDatabaseURL = "SVC_DATABASE_URL"

// statementCacheCapacity is how many prepared statements a plugin's
// connection keeps: more than any plugin runs.
const statementCacheCapacity = 128

// Open connects a plugin to the database the gateway gave it (in
// SVC_DATABASE_URL), with at most maxConns connections, and applies the
// owner's migrations: what every plugin with a schema does first.
func Open(ctx context.Context, owner string, files fs.FS, maxConns int32) (*pgxpool.Pool, error) {
	url := os.Getenv(EnvDatabaseURL)
	if url == "" {
		return nil, fmt.Errorf("%s is not set: the %s plugin is started by the gateway", EnvDatabaseURL, owner)
	}
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("parse %s: %w", EnvDatabaseURL, err)
	}
	cfg.MaxConns = maxConns
	// pgx sizes two caches per connection at 512 statements up front; a
	// plugin runs a few dozen (svcchat, the most, 46), and the description
	// cache serves an exec mode no plugin uses.
	cfg.ConnConfig.StatementCacheCapacity = statementCacheCapacity
	cfg.ConnConfig.DescriptionCacheCapacity = 0
	if tracing.Enabled() {
		cfg.ConnConfig.Tracer = tracing.PgxTracer{}
	}
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		return nil, fmt.Errorf("connect to PostgreSQL: %w", err)
	}
	if _, err := Apply(ctx, pool, owner, files); err != nil {
		pool.Close()
		return nil, fmt.Errorf("migrate %s schema: %w", owner, err)
	}
	return pool, nil
}
