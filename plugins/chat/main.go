package main

import (
	"context"
	"os"
	"time"

	"github.com/svcplatform/svc/internal/readpool"
	chatsql "github.com/svcplatform/svc/plugins/chat/sql"
	"github.com/svcplatform/svc/sdk"
	"github.com/svcplatform/svc/sdk/migrate"
)

// version is the plugin's version, shown to operators.
const version = "1.0.0"

// info identifies the plugin; it emits no events (direct messages never
// leave the chat app).
var info = sdk.Info{Name: "chat", Version: version}

func main() {
	p := sdk.New(info)
	if err := setUp(p); err != nil {
		p.Logger().Error("chat plugin cannot start", "error", err)
		os.Exit(1)
	}
	p.Serve()
}

// setUp connects to the database, migrates it and registers the methods.
func setUp(p *sdk.Plugin) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	pool, err := migrate.Open(ctx, "chat", chatsql.Migrations(), 8)
	if err != nil {
		return err
	}
	// Chat list and thread reads may come from a read replica when the
	// gateway has one.
	db, err := readpool.Open(pool, 8, p.Logger())
	if err != nil {
		pool.Close()
		return err
	}
	(&service{pool: pool, db: db}).register(p)
	p.OnHealth(func(ctx context.Context) error { return pool.Ping(ctx) })
	return nil
}
