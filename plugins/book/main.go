package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/svcplatform/svc/plugins/sdk"
	"github.com/svcplatform/svc/plugins/sdk/migrate"
	booksql "github.com/svcplatform/svc/sql/book"
)

// version is the plugin's version, shown to operators.
const version = "1.0.0"

func main() {
	p := sdk.New(sdk.Info{Name: "book", Version: version, Events: []string{EventPostCreated}})
	if err := run(p); err != nil {
		p.Logger().Error("book plugin cannot start", "error", err)
		os.Exit(1)
	}
}

func run(p *sdk.Plugin) error {
	url := os.Getenv("SVC_DATABASE_URL")
	if url == "" {
		return fmt.Errorf("SVC_DATABASE_URL is not set: the book plugin is started by the gateway")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return fmt.Errorf("parse SVC_DATABASE_URL: %w", err)
	}
	cfg.MaxConns = 16
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		return fmt.Errorf("connect to PostgreSQL: %w", err)
	}
	if _, err := migrate.Apply(ctx, pool, "book", booksql.Migrations()); err != nil {
		return fmt.Errorf("migrate book schema: %w", err)
	}
	svc := &service{pool: pool}
	svc.register(p)
	p.OnHealth(func(ctx context.Context) error { return pool.Ping(ctx) })
	p.Serve()
	return nil
}
