package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/svcplatform/svc/plugins/sdk"
	"github.com/svcplatform/svc/plugins/sdk/migrate"
	svcchatsql "github.com/svcplatform/svc/plugins/svcchat/sql"
)

// version is the plugin's version, shown to operators.
const version = "1.0.0"

// info identifies the plugin and the events it emits.
var info = sdk.Info{Name: "svcchat", Version: version,
	Events: []string{EventMessageReceived, EventPageMessageSent, EventMessageSent, EventOptIn, EventOptOut, EventHandover}}

func main() {
	p := sdk.New(info)
	if err := setUp(p); err != nil {
		p.Logger().Error("svcchat plugin cannot start", "error", err)
		os.Exit(1)
	}
	p.Serve()
}

// setUp connects to the database, migrates it and registers the methods.
func setUp(p *sdk.Plugin) error {
	url := os.Getenv("SVC_DATABASE_URL")
	if url == "" {
		return fmt.Errorf("SVC_DATABASE_URL is not set: the svcchat plugin is started by the gateway")
	}
	pool, err := openPool(url)
	if err != nil {
		return err
	}
	svc := &service{pool: pool, log: p.Logger(), assistant: newAssistant(pool, p.Host, p.Logger())}
	svc.register(p)
	go svc.assistant.run(context.Background())
	p.OnHealth(func(ctx context.Context) error { return pool.Ping(ctx) })
	return nil
}

// openPool connects to PostgreSQL and migrates the svcchat schema.
func openPool(url string) (*pgxpool.Pool, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("parse SVC_DATABASE_URL: %w", err)
	}
	cfg.MaxConns = 16
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		return nil, fmt.Errorf("connect to PostgreSQL: %w", err)
	}
	if _, err := migrate.Apply(ctx, pool, "svcchat", svcchatsql.Migrations()); err != nil {
		pool.Close()
		return nil, fmt.Errorf("migrate svcchat schema: %w", err)
	}
	return pool, nil
}
