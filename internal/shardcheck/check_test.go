package shardcheck_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/svcplatform/svc/internal/pgtest"
	"github.com/svcplatform/svc/internal/shardcheck"
)

// broken is one table breaking one rule.
type broken struct {
	table string
	rule  shardcheck.Rule
}

// Each row builds tables in a fresh database, lists them, and names the violations the
// checker must report: none for a schema a sharded cluster accepts.
var ruleTests = []struct {
	name   string
	ddl    string
	places map[string]shardcheck.Kind
	want   []broken
}{
	{
		name:   "a page table keyed by id alone is refused",
		ddl:    `CREATE TABLE s.posts (id bigint PRIMARY KEY, page_id text NOT NULL)`,
		places: map[string]shardcheck.Kind{"s.posts": shardcheck.Page},
		want:   []broken{{"s.posts", shardcheck.PrimaryKey}},
	},
	{
		name:   "a page table keyed by page_id and id passes",
		ddl:    `CREATE TABLE s.posts (page_id text NOT NULL, id bigint, PRIMARY KEY (page_id, id))`,
		places: map[string]shardcheck.Kind{"s.posts": shardcheck.Page},
	},
	{
		name:   "a page table without a primary key is refused",
		ddl:    `CREATE TABLE s.posts (page_id text NOT NULL, id bigint)`,
		places: map[string]shardcheck.Kind{"s.posts": shardcheck.Page},
		want:   []broken{{"s.posts", shardcheck.PrimaryKey}},
	},
	{
		name:   "a unique constraint without page_id is refused",
		ddl:    `CREATE TABLE s.posts (page_id text NOT NULL, id bigint, slug text, PRIMARY KEY (page_id, id), UNIQUE (slug))`,
		places: map[string]shardcheck.Kind{"s.posts": shardcheck.Page},
		want:   []broken{{"s.posts", shardcheck.UniqueKey}},
	},
	{
		name: "a partial unique index without page_id is refused",
		ddl: `CREATE TABLE s.posts (page_id text NOT NULL, id bigint, slug text, PRIMARY KEY (page_id, id));
CREATE UNIQUE INDEX posts_slug ON s.posts (slug) WHERE slug IS NOT NULL`,
		places: map[string]shardcheck.Kind{"s.posts": shardcheck.Page},
		want:   []broken{{"s.posts", shardcheck.UniqueKey}},
	},
	{
		name: "page_id as an INCLUDE column or inside an expression does not count",
		ddl: `CREATE TABLE s.posts (page_id text NOT NULL, id bigint, PRIMARY KEY (page_id, id));
CREATE UNIQUE INDEX posts_id ON s.posts (id) INCLUDE (page_id);
CREATE UNIQUE INDEX posts_lower ON s.posts (lower(page_id), id)`,
		places: map[string]shardcheck.Kind{"s.posts": shardcheck.Page},
		want:   []broken{{"s.posts", shardcheck.UniqueKey}, {"s.posts", shardcheck.UniqueKey}},
	},
	{
		name: "a unique index that contains page_id passes",
		ddl: `CREATE TABLE s.posts (page_id text NOT NULL, id bigint, slug text, PRIMARY KEY (page_id, id));
CREATE UNIQUE INDEX posts_slug ON s.posts (slug, page_id)`,
		places: map[string]shardcheck.Kind{"s.posts": shardcheck.Page},
	},
	{
		name:   "a page table without page_id is refused",
		ddl:    `CREATE TABLE s.posts (id bigint PRIMARY KEY)`,
		places: map[string]shardcheck.Kind{"s.posts": shardcheck.Page},
		want:   []broken{{"s.posts", shardcheck.PageIDColumn}},
	},
	{
		name:   "a page_id that may be null is refused",
		ddl:    `CREATE TABLE s.posts (id bigint PRIMARY KEY, page_id text, UNIQUE (page_id, id))`,
		places: map[string]shardcheck.Kind{"s.posts": shardcheck.Page},
		want:   []broken{{"s.posts", shardcheck.PageIDColumn}, {"s.posts", shardcheck.PrimaryKey}},
	},
	{
		name:   "a page_id of another type than text is refused",
		ddl:    `CREATE TABLE s.posts (page_id bigint NOT NULL, id bigint, PRIMARY KEY (page_id, id))`,
		places: map[string]shardcheck.Kind{"s.posts": shardcheck.Page},
		want:   []broken{{"s.posts", shardcheck.PageIDColumn}},
	},
	{
		name: "a key between page tables that leaves out page_id is refused",
		ddl: `CREATE TABLE s.posts (page_id text NOT NULL, id bigint, PRIMARY KEY (page_id, id), UNIQUE (id));
CREATE TABLE s.comments (page_id text NOT NULL, id bigint, post_id bigint REFERENCES s.posts (id), PRIMARY KEY (page_id, id))`,
		places: map[string]shardcheck.Kind{"s.posts": shardcheck.Page, "s.comments": shardcheck.Page},
		want:   []broken{{"s.comments", shardcheck.ForeignKeyRule}, {"s.posts", shardcheck.UniqueKey}},
	},
	{
		name: "a key between page tables that joins page_id to another column is refused",
		ddl: `CREATE TABLE s.posts (page_id text NOT NULL, id text, PRIMARY KEY (page_id, id), UNIQUE (id, page_id));
CREATE TABLE s.comments (page_id text NOT NULL, id bigint, post_id text, PRIMARY KEY (page_id, id),
    FOREIGN KEY (page_id, post_id) REFERENCES s.posts (id, page_id))`,
		places: map[string]shardcheck.Kind{"s.posts": shardcheck.Page, "s.comments": shardcheck.Page},
		want:   []broken{{"s.comments", shardcheck.ForeignKeyRule}},
	},
	{
		name: "a key between page tables joined on page_id passes",
		ddl: `CREATE TABLE s.posts (page_id text NOT NULL, id bigint, PRIMARY KEY (page_id, id));
CREATE TABLE s.comments (page_id text NOT NULL, id bigint, post_id bigint, PRIMARY KEY (page_id, id),
    FOREIGN KEY (page_id, post_id) REFERENCES s.posts (page_id, id))`,
		places: map[string]shardcheck.Kind{"s.posts": shardcheck.Page, "s.comments": shardcheck.Page},
	},
	{
		name: "a page table referencing a local table is refused",
		ddl: `CREATE TABLE s.users (id bigint PRIMARY KEY);
CREATE TABLE s.posts (page_id text NOT NULL, id bigint, author bigint REFERENCES s.users, PRIMARY KEY (page_id, id))`,
		places: map[string]shardcheck.Kind{"s.posts": shardcheck.Page, "s.users": shardcheck.Local},
		want:   []broken{{"s.posts", shardcheck.ForeignKeyRule}},
	},
	{
		name: "a page table referencing a reference table passes",
		ddl: `CREATE TABLE s.kinds (id bigint PRIMARY KEY);
CREATE TABLE s.posts (page_id text NOT NULL, id bigint, kind bigint REFERENCES s.kinds, PRIMARY KEY (page_id, id))`,
		places: map[string]shardcheck.Kind{"s.posts": shardcheck.Page, "s.kinds": shardcheck.Reference},
	},
	{
		name: "a local or reference table referencing a page table is refused",
		ddl: `CREATE TABLE s.posts (page_id text NOT NULL, id bigint, PRIMARY KEY (page_id, id));
CREATE TABLE s.log (page_id text, post_id bigint, FOREIGN KEY (page_id, post_id) REFERENCES s.posts);
CREATE TABLE s.pins (page_id text, post_id bigint, FOREIGN KEY (page_id, post_id) REFERENCES s.posts)`,
		places: map[string]shardcheck.Kind{"s.posts": shardcheck.Page, "s.log": shardcheck.Local, "s.pins": shardcheck.Reference},
		want:   []broken{{"s.log", shardcheck.ForeignKeyRule}, {"s.pins", shardcheck.ForeignKeyRule}},
	},
	{
		name: "a reference table's cascading key to a local table is refused",
		ddl: `CREATE TABLE s.users (id bigint PRIMARY KEY);
CREATE TABLE s.roles (user_id bigint REFERENCES s.users ON DELETE CASCADE)`,
		places: map[string]shardcheck.Kind{"s.users": shardcheck.Local, "s.roles": shardcheck.Reference},
		want:   []broken{{"s.roles", shardcheck.ForeignKeyRule}},
	},
	{
		name: "keys among local and reference tables pass",
		ddl: `CREATE TABLE s.apps (id bigint PRIMARY KEY);
CREATE TABLE s.users (id bigint PRIMARY KEY);
CREATE TABLE s.tokens (app_id bigint REFERENCES s.apps ON DELETE CASCADE, user_id bigint REFERENCES s.users ON DELETE CASCADE);
CREATE TABLE s.roles (user_id bigint REFERENCES s.users)`,
		places: map[string]shardcheck.Kind{"s.apps": shardcheck.Reference, "s.users": shardcheck.Local,
			"s.tokens": shardcheck.Local, "s.roles": shardcheck.Reference},
	},
	{
		name: "a table in no list is refused",
		ddl:  `CREATE TABLE s.posts (page_id text NOT NULL, id bigint, PRIMARY KEY (page_id, id))`,
		want: []broken{{"s.posts", shardcheck.Unlisted}},
	},
	{
		name:   "a row naming no table is refused",
		ddl:    `CREATE TABLE s.posts (page_id text NOT NULL, id bigint, PRIMARY KEY (page_id, id))`,
		places: map[string]shardcheck.Kind{"s.posts": shardcheck.Page, "s.ghosts": shardcheck.Local},
		want:   []broken{{"s.ghosts", shardcheck.Stale}},
	},
	{
		name: "a *.name row covers the table of that name in every schema",
		ddl: `CREATE SCHEMA t;
CREATE TABLE s.schema_migrations (version int PRIMARY KEY);
CREATE TABLE t.schema_migrations (version int PRIMARY KEY)`,
		places: map[string]shardcheck.Kind{"*.schema_migrations": shardcheck.Local},
	},
	{
		name:   "a *.name row that covers nothing is refused",
		places: map[string]shardcheck.Kind{"*.schema_migrations": shardcheck.Local},
		want:   []broken{{"*.schema_migrations", shardcheck.Stale}},
	},
}

func TestRules(t *testing.T) {
	t.Parallel()
	for _, tt := range ruleTests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			db := pgtest.Pool(t, pgtest.NewDatabase(t))
			if _, err := db.Exec(t.Context(), "CREATE SCHEMA s;\n"+tt.ddl); err != nil {
				t.Fatal(err)
			}
			tables, err := shardcheck.ReadCatalog(t.Context(), db)
			if err != nil {
				t.Fatal(err)
			}
			var places []shardcheck.Placement
			for name, kind := range tt.places {
				places = append(places, shardcheck.Placement{Table: name, Kind: kind, Reason: "test", Line: 1})
			}
			var got []broken
			for _, v := range shardcheck.Check(tables, places) {
				got = append(got, broken{v.Table, v.Rule})
				// Every message names the table and says what to do.
				if msg := v.Error(); !strings.Contains(msg, v.Table) || !strings.Contains(msg, "Fix: ") {
					t.Errorf("message %q does not name the table and the fix", msg)
				}
			}
			sortBroken(got)
			sortBroken(tt.want)
			if !slices.Equal(got, tt.want) {
				t.Errorf("violations %v, want %v\n%s", got, tt.want, describe(shardcheck.Check(tables, places)))
			}
		})
	}
}

func sortBroken(b []broken) {
	slices.SortFunc(b, func(x, y broken) int {
		return strings.Compare(x.table+"\x00"+string(x.rule), y.table+"\x00"+string(y.rule))
	})
}

func describe(vs []shardcheck.Violation) string {
	var b strings.Builder
	for _, v := range vs {
		fmt.Fprintln(&b, v.Error())
	}
	return b.String()
}
