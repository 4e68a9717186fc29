package main

import (
	"context"
	"os"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	completionssql "github.com/svcplatform/svc/plugins/completions/sql"
	"github.com/svcplatform/svc/plugins/internal/prune"
	"github.com/svcplatform/svc/sdk"
	"github.com/svcplatform/svc/sdk/migrate"
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
	ups, budget, err := parseConfig(os.Getenv(EnvConfig), os.Getenv)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	pool, err := migrate.Open(ctx, "completions", completionssql.Migrations(), 4) // usage batches and reads only
	if err != nil {
		return err
	}
	svc := newService(p, pool, ups, budget)
	go svc.usage.run(context.Background())
	go prune.Every(context.Background(), time.Hour, svc.usage.log, svc.pruneRound)
	p.OnStop(svc.stop)
	p.OnHealth(func(ctx context.Context) error { return pool.Ping(ctx) })
	for _, u := range ups {
		p.Logger().Info("upstream configured", "upstream", u.name, "models", u.models, "weight", u.weight, "timeout", u.timeout.String())
	}
	p.Serve()
	return nil
}

// newService builds the plugin's parts and registers its methods on p.
func newService(p *sdk.Plugin, pool *pgxpool.Pool, ups []*upstream, budget limits) *service {
	m := newMetrics()
	s := &service{
		router:  newRouter(ups, p.Logger(), m),
		usage:   newRecorder(pool, p.Logger(), m),
		quota:   newQuota(pool, p.Logger(), budget),
		db:      pool,
		metrics: m,
		now:     time.Now,
	}
	s.register(p)
	return s
}
