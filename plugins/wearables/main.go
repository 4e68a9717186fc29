package main

import (
	"context"
	"os"
	"time"

	wearablessql "github.com/svcplatform/svc/plugins/wearables/sql"
	"github.com/svcplatform/svc/sdk"
	"github.com/svcplatform/svc/sdk/migrate"
)

// version is the plugin's version, shown to operators.
const version = "1.0.0"

func main() {
	p := sdk.New(sdk.Info{Name: "wearables", Version: version, Events: []string{EventCardDelivered, EventActionConfirmed}})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	pool, err := migrate.Open(ctx, "wearables", wearablessql.Migrations(), 8)
	cancel()
	if err != nil {
		p.Logger().Error("wearables plugin cannot start", "error", err)
		os.Exit(1)
	}
	svc := newService(pool, Options{SimulateDevices: os.Getenv("SVC_DEV_SEED") == "1"}, p.Logger())
	svc.register(p)
	p.OnHealth(func(ctx context.Context) error { return pool.Ping(ctx) })
	// The keeper runs until the process exits: Serve never returns, and a
	// transaction cut short by the exit simply rolls back.
	go svc.runKeeper(context.Background())
	p.Serve()
}
