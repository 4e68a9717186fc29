package main

import (
	"context"
	"os"
	"time"

	adssql "github.com/svcplatform/svc/plugins/ads/sql"
	"github.com/svcplatform/svc/plugins/internal/prune"
	"github.com/svcplatform/svc/sdk"
	"github.com/svcplatform/svc/sdk/migrate"
)

// version is the plugin's version, shown to operators.
const version = "1.0.0"

func main() {
	p := sdk.New(sdk.Info{Name: "ads", Version: version})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	pool, err := migrate.Open(ctx, "ads", adssql.Migrations(), 4)
	cancel()
	if err != nil {
		p.Logger().Error("ads plugin cannot start", "error", err)
		os.Exit(1)
	}
	// Development (the seed on) gives a business its sandbox ad account
	// the first time its user lists them.
	svc := &service{pool: pool, development: os.Getenv("SVC_DEV_SEED") == "1"}
	svc.register(p)
	go prune.Every(context.Background(), time.Hour, p.Logger(), svc.pruneRound)
	p.OnHealth(func(ctx context.Context) error { return pool.Ping(ctx) })
	p.Serve()
}
