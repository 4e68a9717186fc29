package oauth_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/svcplatform/svc/gateway/internal/oauth"
)

// A statement run with a generic plan gives back its connection with the
// planner's setting as it was, whether it succeeded or failed, so the
// pool's other queries keep their custom plans; its failure is reported.
func TestGenericPlanStatementsLeaveTheConnectionsSettingAsItWas(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	cfg, err := pgxpool.ParseConfig(b.URL)
	if err != nil {
		t.Fatal(err)
	}
	cfg.MaxConns = 1 // every statement on the same connection
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	setting := func() string {
		t.Helper()
		var v string
		if err := pool.QueryRow(ctx, "SHOW plan_cache_mode").Scan(&v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	db := oauth.GenericPlans(pool)

	rows, err := db.Query(ctx, "SELECT current_setting('plan_cache_mode')")
	if err != nil {
		t.Fatal(err)
	}
	during, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil || len(during) != 1 || during[0] != "force_generic_plan" {
		t.Fatalf("during the statement: %v %v, want force_generic_plan", during, err)
	}
	if got := setting(); got != "auto" {
		t.Fatalf("after it: %s, want auto", got)
	}

	rows, err = db.Query(ctx, "SELECT 1/0")
	if err == nil {
		for rows.Next() {
		}
		err = rows.Err()
		rows.Close()
	}
	if err == nil {
		t.Fatal("a failing statement reported no error")
	}
	if got := setting(); got != "auto" {
		t.Fatalf("after a failed statement: %s, want auto", got)
	}

	var one int
	if err := db.QueryRow(ctx, "SELECT 1").Scan(&one); err != nil || one != 1 {
		t.Fatalf("QueryRow: %d %v", one, err)
	}
	if err := db.QueryRow(ctx, "SELECT 1 WHERE false").Scan(&one); err != pgx.ErrNoRows {
		t.Fatalf("QueryRow without a row: %v, want pgx.ErrNoRows", err)
	}
	if _, err := db.Exec(ctx, "SELECT 1/0"); err == nil {
		t.Fatal("Exec of a failing statement reported no error")
	}
	if got := setting(); got != "auto" {
		t.Fatalf("at the end: %s, want auto", got)
	}
}
