package main

import (
	"context"
	"os"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	lensesv1 "github.com/svcplatform/svc/gen/svc/lenses/v1"
	"github.com/svcplatform/svc/plugins/lenses/internal/lensesdb"
	lensessql "github.com/svcplatform/svc/plugins/lenses/sql"
	"github.com/svcplatform/svc/sdk"
	"github.com/svcplatform/svc/sdk/migrate"
)

// version is the plugin's version, shown to operators.
const version = "1.0.0"

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
	methods := lensesv1.File_svc_lenses_v1_lenses_proto.Services().ByName("LensesService").Methods()
	sdk.Handle(p, methods.ByName("ListLenses"), func(ctx context.Context, _ *sdk.Call, _ *lensesv1.ListLensesRequest) (*lensesv1.ListLensesResponse, error) {
		rows, err := lensesdb.New(pool).ListActiveLenses(ctx)
		if err != nil {
			return nil, err
		}
		res := &lensesv1.ListLensesResponse{Data: make([]*lensesv1.Lens, len(rows))}
		for i, r := range rows {
			res.Data[i] = &lensesv1.Lens{Id: r.ID, Name: r.Name, IconUrl: r.IconUrl}
		}
		return res, nil
	})
}
