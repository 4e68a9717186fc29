package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/svcplatform/svc/plugins/sdk"
	"github.com/svcplatform/svc/plugins/sdk/migrate"
	wearablessql "github.com/svcplatform/svc/plugins/wearables/sql"
)

// version is the plugin's version, shown to operators.
const version = "1.0.0"

func main() {
	p := sdk.New(sdk.Info{Name: "wearables", Version: version, Events: []string{EventCardDelivered, EventActionConfirmed}})
	if err := run(p); err != nil {
		p.Logger().Error("wearables plugin cannot start", "error", err)
		os.Exit(1)
	}
}

func run(p *sdk.Plugin) error {
	url := os.Getenv("SVC_DATABASE_URL")
	if url == "" {
		return fmt.Errorf("SVC_DATABASE_URL is not set: the wearables plugin is started by the gateway")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return fmt.Errorf("parse SVC_DATABASE_URL: %w", err)
	}
	cfg.MaxConns = 8
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		return fmt.Errorf("connect to PostgreSQL: %w", err)
	}
	if _, err := migrate.Apply(ctx, pool, "wearables", wearablessql.Migrations()); err != nil {
		return fmt.Errorf("migrate wearables schema: %w", err)
	}
	svc := newService(pool, Options{SimulateDevices: os.Getenv("SVC_DEV_SEED") == "1"}, p.Logger())
	svc.register(p)
	p.OnHealth(func(ctx context.Context) error { return pool.Ping(ctx) })
	// The keeper runs until the process exits: Serve never returns, and a
	// transaction cut short by the exit simply rolls back.
	go svc.runKeeper(context.Background())
	p.Serve()
	return nil
}
