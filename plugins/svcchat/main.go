package main

import (
	"context"
	"os"
	"time"

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
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	pool, err := migrate.Open(ctx, "svcchat", svcchatsql.Migrations(), 16)
	if err != nil {
		return err
	}
	svc := &service{pool: pool, log: p.Logger(), assistant: newAssistant(pool, p.Host, p.Logger())}
	svc.register(p)
	go svc.assistant.run(context.Background())
	p.OnHealth(func(ctx context.Context) error { return pool.Ping(ctx) })
	return nil
}
