package main

import (
	"context"
	"strings"
	"testing"
	"time"

	lensesv1 "github.com/svcplatform/svc/gen/svc/lenses/v1"
	"github.com/svcplatform/svc/internal/pgtest"
	lensessql "github.com/svcplatform/svc/plugins/lenses/sql"
	"github.com/svcplatform/svc/sdk"
	"github.com/svcplatform/svc/sdk/migrate"
	"github.com/svcplatform/svc/sdk/plugintest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func TestTheChatAppListsTheBuiltInLensesInOrder(t *testing.T) {
	// migrate.Open reads the URL the gateway would pass.
	t.Setenv(migrate.EnvDatabaseURL, pgtest.NewDatabase(t))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	pool, err := migrate.Open(ctx, "lenses", lensessql.Migrations(), 2)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	p := sdk.New(sdk.Info{Name: "lenses", Version: version})
	register(p, pool)
	tp := plugintest.Start(t, p)
	session := sdk.Principal{Kind: sdk.TokenKindSession, UserID: "1000000001"}
	res, err := plugintest.Call[*lensesv1.ListLensesResponse](ctx, tp, "/svc.lenses.v1.LensesService/ListLenses", session, &lensesv1.ListLensesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, l := range res.GetData() {
		names = append(names, l.GetName())
		if l.GetId() == "" || !strings.HasPrefix(l.GetIconUrl(), "data:image/svg+xml,") {
			t.Errorf("lens %v", l)
		}
	}
	if strings.Join(names, ",") != "Sunny,Ocean,Mono" {
		t.Fatalf("lenses %v", names)
	}
	// A lens taken out of service is no longer offered.
	if _, err := pool.Exec(ctx, `UPDATE lenses.lenses SET active = false WHERE name = 'Ocean'`); err != nil {
		t.Fatal(err)
	}
	res, err = plugintest.Call[*lensesv1.ListLensesResponse](ctx, tp, "/svc.lenses.v1.LensesService/ListLenses", session, &lensesv1.ListLensesRequest{})
	if err != nil || len(res.GetData()) != 2 {
		t.Fatalf("after retiring a lens: %v %v", res, err)
	}
}

func TestOpenWithoutADatabaseURLSaysWhy(t *testing.T) {
	t.Setenv(migrate.EnvDatabaseURL, "")
	_, err := migrate.Open(context.Background(), "lenses", lensessql.Migrations(), 2)
	if err == nil || !strings.Contains(err.Error(), "SVC_DATABASE_URL") {
		t.Fatalf("got %v", err)
	}
}
