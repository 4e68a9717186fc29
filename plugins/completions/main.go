package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	completionssql "github.com/svcplatform/svc/plugins/completions/sql"
	"github.com/svcplatform/svc/plugins/sdk"
	"github.com/svcplatform/svc/plugins/sdk/migrate"
)

// version is the plugin's version, shown to operators.
const version = "1.0.0"

func main() {
	p := sdk.New(sdk.Info{Name: "completions", Version: version})
	if err := run(p); err != nil {
		p.Logger().Error("completions plugin cannot start", "error", err)
		os.Exit(1)
	}
}

func run(p *sdk.Plugin) error {
	url := os.Getenv("SVC_DATABASE_URL")
	if url == "" {
		return fmt.Errorf("SVC_DATABASE_URL is not set: the completions plugin is started by the gateway")
	}
	ups, err := parseConfig(os.Getenv(EnvConfig), os.Getenv)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return fmt.Errorf("parse SVC_DATABASE_URL: %w", err)
	}
	cfg.MaxConns = 4 // usage batches and usage reads only
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		return fmt.Errorf("connect to PostgreSQL: %w", err)
	}
	if _, err := migrate.Apply(ctx, pool, "completions", completionssql.Migrations()); err != nil {
		return fmt.Errorf("migrate completions schema: %w", err)
	}
	svc := newService(p, pool, ups)
	go svc.usage.run(context.Background())
	p.OnHealth(func(ctx context.Context) error { return pool.Ping(ctx) })
	for _, u := range ups {
		p.Logger().Info("upstream configured", "upstream", u.name, "models", u.models, "weight", u.weight, "timeout", u.timeout.String())
	}
	p.Serve()
	return nil
}

// newService builds the plugin's parts and registers its methods on p.
func newService(p *sdk.Plugin, pool *pgxpool.Pool, ups []*upstream) *service {
	m := newMetrics()
	s := &service{
		router:  newRouter(ups, p.Logger(), m),
		usage:   newRecorder(pool, p.Logger(), m),
		db:      pool,
		metrics: m,
		now:     time.Now,
	}
	s.register(p)
	return s
}
