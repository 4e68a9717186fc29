package main

import (
	"context"
	"os"
	"time"

	"github.com/svcplatform/svc/internal/readpool"
	booksql "github.com/svcplatform/svc/plugins/book/sql"
	"github.com/svcplatform/svc/sdk"
	"github.com/svcplatform/svc/sdk/migrate"
)

// version is the plugin's version, shown to operators.
const version = "1.0.0"

func main() {
	p := sdk.New(sdk.Info{Name: "book", Version: version, Events: []string{EventPostCreated}})
	if err := run(p); err != nil {
		p.Logger().Error("book plugin cannot start", "error", err)
		os.Exit(1)
	}
}

func run(p *sdk.Plugin) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	pool, err := migrate.Open(ctx, "book", booksql.Migrations(), 16)
	if err != nil {
		return err
	}
	// Reads of posts may come from a read replica when the gateway has one.
	db, err := readpool.Open(pool, 16, p.Logger())
	if err != nil {
		return err
	}
	defer db.Close()
	svc := newService(pool, db)
	svc.register(p)
	p.OnHealth(func(ctx context.Context) error { return pool.Ping(ctx) })
	p.Serve()
	return nil
}
