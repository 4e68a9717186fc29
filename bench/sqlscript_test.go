package bench

import (
	"os"
	"strings"
	"testing"
)

const queryFile = `-- name: CreatePost :one
INSERT INTO book.posts (page_id, content)
VALUES (@page_id, @content)
RETURNING *;

-- name: ListPostsFirst :many
-- The newest posts of a Page.
SELECT * FROM book.posts WHERE page_id = @page_id
ORDER BY id DESC LIMIT @lim;

-- name: Last :exec
SELECT 1
`

func TestNamedQueryTakesTheNamedBlockWithoutComments(t *testing.T) {
	got, err := NamedQuery([]byte(queryFile), "ListPostsFirst")
	if err != nil {
		t.Fatal(err)
	}
	want := "SELECT * FROM book.posts WHERE page_id = @page_id\nORDER BY id DESC LIMIT @lim;"
	if got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestNamedQueryEndsTheLastQueryWithASemicolon(t *testing.T) {
	got, err := NamedQuery([]byte(queryFile), "Last")
	if err != nil || got != "SELECT 1;" {
		t.Errorf("got %q, %v; want \"SELECT 1;\"", got, err)
	}
}

func TestNamedQueryRefusesAMissingOrTwiceNamedQuery(t *testing.T) {
	if _, err := NamedQuery([]byte(queryFile), "Nope"); err == nil || !strings.Contains(err.Error(), `no query named "Nope"`) {
		t.Errorf("missing query: err %v", err)
	}
	twice := queryFile + "\n-- name: Last :exec\nSELECT 2;\n"
	if _, err := NamedQuery([]byte(twice), "Last"); err == nil || !strings.Contains(err.Error(), "twice") {
		t.Errorf("query named twice: err %v", err)
	}
	if _, err := NamedQuery([]byte("-- name: Empty :exec\n-- only a comment\n"), "Empty"); err == nil {
		t.Error("an empty query was accepted")
	}
}

// The queries the curves run must stay readable where benchreport looks
// for them: a moved or renamed query fails here, not in a bench run.
func TestTheBenchmarkedQueriesAreFoundInTheRepository(t *testing.T) {
	for _, q := range []struct{ name, file string }{
		{"ListPostsFirst", "../plugins/book/sql/queries/posts.sql"},
		{"CreatePost", "../plugins/book/sql/queries/posts.sql"},
		{"GetPage", "../sql/core/queries/identity.sql"},
		{"PageAccess", "../sql/core/queries/identity.sql"},
		{"InsertEvent", "../sql/sdk/queries/outbox.sql"},
	} {
		b, err := os.ReadFile(q.file)
		if err != nil {
			t.Errorf("%s: %v (moved? benchreport's search paths must follow)", q.file, err)
			continue
		}
		if _, err := NamedQuery(b, q.name); err != nil {
			t.Errorf("%s: %v", q.file, err)
		}
	}
}

func TestBindNamedReplacesEachParameter(t *testing.T) {
	got, err := BindNamed("SELECT a::text FROM t WHERE x = @page_id AND y = @lim AND z = @page_id;",
		map[string]string{"page_id": ":page_id", "lim": "NULL"})
	if err != nil {
		t.Fatal(err)
	}
	if want := "SELECT a::text FROM t WHERE x = :page_id AND y = NULL AND z = :page_id;"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestBindNamedReplacesSqlcArgFunctions(t *testing.T) {
	got, err := BindNamed("VALUES (@id, sqlc.narg(page_id), sqlc.arg('data'), mysqlc.arg(x), sqlc.other(y))",
		map[string]string{"id": ":id", "page_id": "NULL", "data": ":data"})
	if err != nil {
		t.Fatal(err)
	}
	if want := "VALUES (:id, NULL, :data, mysqlc.arg(x), sqlc.other(y))"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestBindNamedLeavesQuotedTextCommentsAndOperatorsAlone(t *testing.T) {
	in := "SELECT '@a', \"@b\", 'it''s @c' -- @d\n, @e, x @> y, x @@ y, '@unclosed"
	got, err := BindNamed(in, map[string]string{"e": "1"})
	if err != nil {
		t.Fatal(err)
	}
	if want := "SELECT '@a', \"@b\", 'it''s @c' -- @d\n, 1, x @> y, x @@ y, '@unclosed"; got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}

func TestBindNamedRefusesAParameterWithoutArgument(t *testing.T) {
	if _, err := BindNamed("SELECT @a, @b", map[string]string{"a": "1"}); err == nil || !strings.Contains(err.Error(), "@b") {
		t.Errorf("err %v, want one naming @b", err)
	}
}

func FuzzNamedQuery(f *testing.F) {
	f.Add([]byte(queryFile), "ListPostsFirst")
	f.Add([]byte(queryFile), "Last")
	f.Add([]byte("-- name: X :one\n;"), "X")
	f.Add([]byte("-- name:\n-- name: X"), "X")
	f.Fuzz(func(t *testing.T, file []byte, name string) {
		q, err := NamedQuery(file, name)
		if err != nil {
			return
		}
		if !strings.HasSuffix(q, ";") || strings.TrimSpace(q) != q {
			t.Errorf("query %q is not trimmed and ended with ';'", q)
		}
		if strings.Contains(q, "-- name:") {
			t.Errorf("query %q runs into another one", q)
		}
	})
}

func FuzzBindNamed(f *testing.F) {
	f.Add("SELECT @a, '@b', @c_1 -- @d", "X")
	f.Add("'unclosed @a", "")
	f.Add("@", "v")
	f.Add("sqlc.narg(a) sqlc.arg('b') sqlc.slice( c )", "v")
	f.Fuzz(func(t *testing.T, q, v string) {
		// Every parameter bound to a pgbench variable: no parameter may be
		// left outside quotes and comments, and unbound text is kept.
		v = ":" + strings.Map(func(r rune) rune {
			if r < 128 && identPart(byte(r)) {
				return r
			}
			return -1
		}, v)
		args := map[string]string{}
		for i := 0; i+1 < len(q); i++ {
			if q[i] == '@' && identStart(q[i+1]) {
				j := i + 1
				for j < len(q) && identPart(q[j]) {
					j++
				}
				args[q[i+1:j]] = v
			}
			if name, _, ok := sqlcArg(q, i); ok {
				args[name] = v
			}
		}
		got, err := BindNamed(q, args)
		if err != nil {
			t.Fatalf("BindNamed(%q): %v", q, err)
		}
		if len(args) == 0 && got != q {
			t.Errorf("BindNamed(%q) without parameters changed it to %q", q, got)
		}
		again, err := BindNamed(got, map[string]string{})
		if err != nil {
			t.Errorf("a parameter is left in %q (from %q): %v", got, q, err)
		}
		if again != got {
			t.Errorf("binding twice changed %q to %q", got, again)
		}
	})
}
