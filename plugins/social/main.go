package main

import (
	"context"
	"os"
	"time"

	socialsql "github.com/svcplatform/svc/plugins/social/sql"
	"github.com/svcplatform/svc/sdk"
	"github.com/svcplatform/svc/sdk/migrate"
)

// version is the plugin's version, shown to operators.
const version = "1.0.0"

func main() {
	p := sdk.New(sdk.Info{Name: "social", Version: version, Events: []string{EventThreadCreated, EventReelReady}})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	pool, err := migrate.Open(ctx, "social", socialsql.Migrations(), 8)
	cancel()
	if err != nil {
		p.Logger().Error("social plugin cannot start", "error", err)
		os.Exit(1)
	}
	// Development (the seed on) lets reels point at http://127.0.0.1, so
	// that a local file server can stand in for a CDN.
	svc := newService(pool, Options{Development: os.Getenv("SVC_DEV_SEED") == "1"}, p.Logger())
	svc.register(p)
	p.OnHealth(func(ctx context.Context) error { return pool.Ping(ctx) })
	// The checker runs until the process exits; a check cut short rolls
	// back and its reel is claimed again.
	go svc.runChecker(context.Background())
	p.Serve()
}
