package migrate_test

import (
	"context"
	"embed"
	"io/fs"
	"log"
	"os"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/svcplatform/svc/internal/pgtest"
	"github.com/svcplatform/svc/sdk/migrate"
)

//go:embed testdata/migrations/*.sql
var migrations embed.FS

// A plugin migrates its schema at start-up, before it serves.
func ExampleApply() {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, os.Getenv("SVC_DATABASE_URL"))
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close()

	files, err := fs.Sub(migrations, "testdata/migrations")
	if err != nil {
		log.Fatal(err)
	}
	applied, err := migrate.Apply(ctx, pool, "notes", files)
	if err != nil {
		log.Fatal(err)
	}
	for _, name := range applied {
		log.Printf("schema notes: applied %s", name)
	}
}

func TestExampleMigrationsApply(t *testing.T) {
	t.Parallel()
	files, err := fs.Sub(migrations, "testdata/migrations")
	if err != nil {
		t.Fatal(err)
	}
	applied, err := migrate.Apply(t.Context(), pgtest.Pool(t, pgtest.NewDatabase(t)), "notes", files)
	if err != nil {
		t.Fatal(err)
	}
	if len(applied) != 2 {
		t.Errorf("applied %v, want both example files", applied)
	}
}
