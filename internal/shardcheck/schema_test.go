package shardcheck_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/svcplatform/svc/internal/pgtest"
	"github.com/svcplatform/svc/internal/shardcheck"
	"github.com/svcplatform/svc/sdk/migrate"
)

// repoRoot is the repository, seen from this package's folder (where go test runs).
const repoRoot = "../.."

// owner is one schema and the folder of its migration files.
type owner struct{ schema, dir string }

// owners finds every migration folder of the repository: the gateway's core schema first, as
// the gateway migrates it before any plugin starts, then sql/<name>/migrations and
// plugins/<name>/sql/migrations, each migrated into the schema <name> as the plugin does at
// start-up. Reading the folders rather than a list means a new plugin is checked without
// anyone remembering to add it here.
func owners(t *testing.T) []owner {
	t.Helper()
	var out []owner
	for _, layout := range []struct {
		pattern string
		depth   int // how many folders up from the migrations folder the schema's name is
	}{{"sql/*/migrations", 1}, {"plugins/*/sql/migrations", 2}} {
		dirs, err := filepath.Glob(filepath.Join(repoRoot, layout.pattern))
		if err != nil {
			t.Fatal(err)
		}
		for _, dir := range dirs {
			name := dir
			for range layout.depth {
				name = filepath.Dir(name)
			}
			out = append(out, owner{schema: filepath.Base(name), dir: dir})
		}
	}
	// core first, then by name.
	slices.SortFunc(out, func(a, b owner) int {
		if (a.schema == "core") != (b.schema == "core") {
			if a.schema == "core" {
				return -1
			}
			return 1
		}
		return strings.Compare(a.schema, b.schema)
	})
	return out
}

// The schema after every migration of the repository can be sharded by Page, and
// docs/SCALING.md places each of its tables, no more and no fewer.
func TestEveryTableIsPlacedAndShardableByPage(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile(filepath.Join(repoRoot, shardcheck.Document))
	if err != nil {
		t.Fatal(err)
	}
	places, err := shardcheck.ParsePlacements(string(doc))
	if err != nil {
		t.Fatalf("%s: %v", shardcheck.Document, err)
	}

	db := pgtest.Pool(t, pgtest.NewDatabase(t))
	found := map[string]bool{}
	for _, o := range owners(t) {
		if found[o.schema] {
			t.Fatalf("two migration folders for schema %s", o.schema)
		}
		found[o.schema] = true
		applied, err := migrate.Apply(t.Context(), db, o.schema, os.DirFS(o.dir))
		if err != nil {
			t.Fatalf("migrate %s from %s: %v", o.schema, o.dir, err)
		}
		t.Logf("schema %s: applied %d migrations from %s", o.schema, len(applied), o.dir)
	}
	// A guard against the folder search silently finding nothing.
	for _, s := range []string{"core", "book", "svcchat"} {
		if !found[s] {
			t.Fatalf("no migrations found for schema %s: has the layout changed?", s)
		}
	}

	tables, err := shardcheck.ReadCatalog(t.Context(), db)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range shardcheck.Check(tables, places) {
		t.Error(v)
	}
	pages := 0
	for _, p := range places {
		if p.Kind == shardcheck.Page {
			pages++
		}
	}
	t.Logf("%d tables checked, %d of them distributed by Page", len(tables), pages)
}
