package main

import (
	"context"
	"os"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	lensesv1 "github.com/svcplatform/svc/gen/svc/lenses/v1"
	lensessql "github.com/svcplatform/svc/plugins/lenses/sql"
	"github.com/svcplatform/svc/sdk"
	"github.com/svcplatform/svc/sdk/migrate"
)

// version is the plugin's version, shown to operators.
const version = "1.1.0"

func main() {
	p := sdk.New(sdk.Info{Name: "lenses", Version: version})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	pool, err := migrate.Open(ctx, "lenses", lensessql.Migrations(), 4)
	cancel()
	if err != nil {
		p.Logger().Error("lenses plugin cannot start", "error", err)
		os.Exit(1)
	}
	register(p, pool)
	p.OnHealth(func(ctx context.Context) error { return pool.Ping(ctx) })
	p.Serve()
}

func register(p *sdk.Plugin, pool *pgxpool.Pool) {
	s := &service{pool: pool}
	methods := lensesv1.File_svc_lenses_v1_lenses_proto.Services().ByName("LensesService").Methods()
	sdk.Handle(p, methods.ByName("ListLenses"), s.listLenses)
	sdk.Handle(p, methods.ByName("ListAppLenses"), s.listAppLenses)
	sdk.Handle(p, methods.ByName("CreateLens"), s.createLens)
	sdk.Handle(p, methods.ByName("UpdateLens"), s.updateLens)
	sdk.Handle(p, methods.ByName("ListLensQueue"), s.listLensQueue)
	sdk.Handle(p, methods.ByName("DecideLens"), s.decideLens)
}
