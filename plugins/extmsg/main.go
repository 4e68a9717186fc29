package main

import (
	"context"
	"os"
	"time"

	extmsgsql "github.com/svcplatform/svc/plugins/extmsg/sql"
	"github.com/svcplatform/svc/sdk"
	"github.com/svcplatform/svc/sdk/migrate"
)

// version is the plugin's version, shown to operators.
const version = "1.0.0"

func main() {
	p := sdk.New(sdk.Info{Name: "extmsg", Version: version, Events: events})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	pool, err := migrate.Open(ctx, "extmsg", extmsgsql.Migrations(), 4)
	cancel()
	if err != nil {
		p.Logger().Error("extmsg plugin cannot start", "error", err)
		os.Exit(1)
	}
	(&service{pool: pool}).register(p)
	p.OnHealth(func(ctx context.Context) error { return pool.Ping(ctx) })
	p.Serve()
}
