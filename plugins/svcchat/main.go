package main

import (
	"context"
	"os"
	"strconv"
	"time"

	"github.com/svcplatform/svc/internal/readpool"
	"github.com/svcplatform/svc/plugins/internal/prune"
	svcchatsql "github.com/svcplatform/svc/plugins/svcchat/sql"
	"github.com/svcplatform/svc/sdk"
	"github.com/svcplatform/svc/sdk/migrate"
)

// version is the plugin's version, shown to operators.
const version = "1.0.0"

// info identifies the plugin and the events it emits.
var info = sdk.Info{Name: "svcchat", Version: version,
	Events: []string{EventMessageReceived, EventPageMessageSent, EventMessageSent, EventOptIn, EventOptOut, EventHandover,
		EventDelivered, EventRead, EventFailed}}

// envTestMinExpiresIn lowers the smallest expires_in a handover accepts,
// for tests that watch an expiry happen in seconds. Test-only: production
// keeps the documented 60.
const envTestMinExpiresIn = "SVC_SVCCHAT_TEST_MIN_EXPIRES_IN"

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
	// Conversation and message reads may come from a read replica when the
	// gateway has one.
	db, err := readpool.Open(pool, 16, p.Logger())
	if err != nil {
		return err
	}
	svc := newService(pool, db, p.Logger())
	svc.assistant = newAssistant(pool, p.Host, p.Logger())
	if v, err := strconv.ParseInt(os.Getenv(envTestMinExpiresIn), 10, 64); err == nil && v >= 1 && v < minExpiresIn {
		expiresInFloor = v
		p.Logger().Warn("handover expires_in may be as short as the test setting", "seconds", v, "variable", envTestMinExpiresIn)
	}
	svc.register(p)
	go svc.assistant.run(context.Background())
	go (&expirer{pool: pool, log: p.Logger(), poll: time.Second}).run(context.Background())
	go prune.Every(context.Background(), time.Hour, p.Logger(), func(ctx context.Context) error {
		return svc.pruneRound(ctx, time.Now())
	})
	p.OnHealth(func(ctx context.Context) error { return pool.Ping(ctx) })
	return nil
}
