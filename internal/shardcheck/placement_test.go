package shardcheck_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/svcplatform/svc/internal/shardcheck"
)

const validList = `# Scaling

Some prose | with a bar.

<!-- table-placement:begin -->
| table | placement | reason |
|---|:---:|---|
| ` + "`book.posts`" + ` | page | a Page's posts |
| core.users | ` + "`reference`" + ` | read on every request |

| *.schema_migrations | local | the migration runner's own record |
<!-- table-placement:end -->

More prose.
`

func TestParsePlacementsReadsTheList(t *testing.T) {
	t.Parallel()
	got, err := shardcheck.ParsePlacements(validList)
	if err != nil {
		t.Fatal(err)
	}
	want := []shardcheck.Placement{
		{Table: "book.posts", Kind: shardcheck.Page, Reason: "a Page's posts", Line: 8},
		{Table: "core.users", Kind: shardcheck.Reference, Reason: "read on every request", Line: 9},
		{Table: "*.schema_migrations", Kind: shardcheck.Local, Reason: "the migration runner's own record", Line: 11},
	}
	if len(got) != len(want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("row %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
}

// Each malformed list is refused with a message naming its line and what is wrong.
func TestParsePlacementsRefusesAMalformedList(t *testing.T) {
	t.Parallel()
	list := func(rows ...string) string {
		return "intro\n" + shardcheck.BeginMarker + "\n| table | placement | reason |\n|---|---|---|\n" +
			strings.Join(rows, "\n") + "\n" + shardcheck.EndMarker + "\n"
	}
	for _, tt := range []struct {
		name, doc, want string
	}{
		{"a document without the list", "# Scaling\n", "no table-placement list"},
		{"a list that is not closed", shardcheck.BeginMarker + "\n| table | placement | reason |\n", "no table-placement list"},
		{"an end before a begin", shardcheck.EndMarker + "\n" + shardcheck.BeginMarker + "\n", "line 1: " + shardcheck.EndMarker + " without"},
		{"two lists", list() + list(), "a second"},
		{"an empty list", shardcheck.BeginMarker + "\n" + shardcheck.EndMarker, "the list is empty"},
		{"a wrong header", shardcheck.BeginMarker + "\n| name | kind | why |\n" + shardcheck.EndMarker, "line 2: the list starts with the header"},
		{"a row of two cells", list("| book.posts | page |"), "line 5: want a table row of three cells"},
		{"a line that is no row", list("book.posts page why"), "line 5: want a table row"},
		{"an unknown placement", list("| book.posts | sharded | why |"), `line 5: table book.posts: placement "sharded"`},
		{"a table without a schema", list("| posts | page | why |"), `line 5: table "posts": want schema.table`},
		{"a table name in capitals", list("| Book.Posts | page | why |"), `table "Book.Posts"`},
		{"a row without a reason", list("| book.posts | page |  |"), "line 5: table book.posts: give the reason"},
		{"a table listed twice", list("| book.posts | page | a |", "| book.posts | local | b |"), "line 6: table book.posts is listed twice (first on line 5)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := shardcheck.ParsePlacements(tt.doc)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one containing %q", err, tt.want)
			}
		})
	}
}

var placementName = regexp.MustCompile(`^(\*|[a-z_][a-z0-9_]*)\.[a-z_][a-z0-9_]*$`)

// Whatever the document, ParsePlacements either refuses it or returns rows that each name one
// table once, with a known placement and a reason.
func FuzzParsePlacements(f *testing.F) {
	f.Add(validList)
	f.Add(shardcheck.BeginMarker + "\n| table | placement | reason |\n|-|-|-|\n| a.b | page | x |\n" + shardcheck.EndMarker)
	f.Add(shardcheck.BeginMarker + "\n|||\n" + shardcheck.EndMarker)
	f.Add(shardcheck.BeginMarker + "\n| table | placement | reason |\n| | | |\n|" + shardcheck.EndMarker)
	f.Add("|")
	f.Fuzz(func(t *testing.T, doc string) {
		rows, err := shardcheck.ParsePlacements(doc)
		if err != nil {
			return
		}
		seen := map[string]bool{}
		for _, r := range rows {
			if !placementName.MatchString(r.Table) || seen[r.Table] || r.Reason == "" || r.Line < 1 {
				t.Fatalf("bad row %+v from %q", r, doc)
			}
			switch r.Kind {
			case shardcheck.Page, shardcheck.Reference, shardcheck.Local:
			default:
				t.Fatalf("bad placement in %+v", r)
			}
			seen[r.Table] = true
		}
	})
}
