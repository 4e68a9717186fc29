package main

import (
	"context"
	"fmt"
	"os"
	"time"

	commercesql "github.com/svcplatform/svc/plugins/commerce/sql"
	"github.com/svcplatform/svc/sdk"
	"github.com/svcplatform/svc/sdk/migrate"
)

// version is the plugin's version, shown to operators.
const version = "1.0.0"

func main() {
	p := sdk.New(sdk.Info{Name: "commerce", Version: version, Events: []string{EventOrderUpdated}})
	if err := setUp(p); err != nil {
		p.Logger().Error("commerce plugin cannot start", "error", err)
		os.Exit(1)
	}
	p.Serve()
}

// setUp connects to the database, migrates it, seeds the development shop
// when asked and registers the methods.
func setUp(p *sdk.Plugin) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	pool, err := migrate.Open(ctx, "commerce", commercesql.Migrations(), 4)
	if err != nil {
		return err
	}
	if os.Getenv("SVC_DEV_SEED") == "1" {
		if err := seedShop(ctx, pool); err != nil {
			pool.Close()
			return fmt.Errorf("seed the development shop: %w", err)
		}
	}
	(&service{pool: pool}).register(p)
	p.OnHealth(func(ctx context.Context) error { return pool.Ping(ctx) })
	return nil
}
