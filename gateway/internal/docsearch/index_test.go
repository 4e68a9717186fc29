package docsearch

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/svcplatform/svc/gateway/internal/apierr"
	"github.com/svcplatform/svc/internal/pgtest"
	"github.com/svcplatform/svc/sdk/migrate"
	coresql "github.com/svcplatform/svc/sql/core"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func setup(t *testing.T) (*Index, *pgxpool.Pool) {
	t.Helper()
	p := pgtest.Pool(t, pgtest.NewDatabase(t))
	if _, err := migrate.Apply(context.Background(), p, "core", coresql.Migrations()); err != nil {
		t.Fatal(err)
	}
	return NewIndex(p), p
}

var sample = []Entry{
	{Path: "docs/PLUGINS.md#events", Kind: "doc", Title: "Events", Body: "A plugin emits events through the outbox, in the transaction of the change they report."},
	{Path: "README.md#webhooks", Kind: "doc", Title: "Webhooks", Body: "Deliveries are signed with the app secret and retried with backoff."},
	{Path: "/api/v1/openapi.json#/paths/~1api~1v1~1hello~1{name}/get", Kind: "api", Title: "GET /api/v1/hello/{name}", Body: "SayHello api v1 hello name"},
}

func TestASearchFindsTheMatchingSectionsWithAHighlightedSnippet(t *testing.T) {
	t.Parallel()
	ix, _ := setup(t)
	ctx := context.Background()
	if err := ix.Refresh(ctx, sample); err != nil {
		t.Fatal(err)
	}
	hits, err := ix.Search(ctx, "outbox transaction")
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 1 || hits[0].Path != "docs/PLUGINS.md#events" || !strings.Contains(hits[0].Snippet, "**outbox**") {
		t.Fatalf("hits %+v", hits)
	}
	// Web search syntax: a word excluded.
	if hits, _ := ix.Search(ctx, "signed -retried"); len(hits) != 0 {
		t.Fatalf("excluded word matched: %+v", hits)
	}
	if hits, _ := ix.Search(ctx, "hello"); len(hits) != 1 || hits[0].Title != "GET /api/v1/hello/{name}" {
		t.Fatalf("API entry: %+v", hits)
	}
	// Stop words only: no query, no hits, no error.
	if hits, err := ix.Search(ctx, "the"); err != nil || len(hits) != 0 {
		t.Fatalf("stop words: %+v %v", hits, err)
	}
}

func TestARefreshDropsWhatIsGoneAndKeepsTheRest(t *testing.T) {
	t.Parallel()
	ix, p := setup(t)
	ctx := context.Background()
	if err := ix.Refresh(ctx, sample); err != nil {
		t.Fatal(err)
	}
	// The partner plugin is removed; the same entries twice change nothing.
	if err := ix.Refresh(ctx, append(sample[:2:2], sample[0])); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := p.QueryRow(ctx, "SELECT count(*) FROM core.docs_sections").Scan(&n); err != nil || n != 2 {
		t.Fatalf("%d rows (%v)", n, err)
	}
	if hits, _ := ix.Search(ctx, "hello"); len(hits) != 0 {
		t.Fatalf("removed entry still found: %+v", hits)
	}
	if err := ix.Refresh(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if err := p.QueryRow(ctx, "SELECT count(*) FROM core.docs_sections").Scan(&n); err != nil || n != 0 {
		t.Fatalf("%d rows after an empty refresh (%v)", n, err)
	}
}

func TestAQueryWithNoWordOrTooLongIsRefusedNamingQ(t *testing.T) {
	t.Parallel()
	ix, _ := setup(t)
	for _, q := range []string{"", "   ", "!!!", strings.Repeat("é", MaxQueryLength+1)} {
		_, err := ix.Search(context.Background(), q)
		var e *apierr.Error
		if !errors.As(err, &e) || e.HTTPStatus != 400 || e.Code != 100 || e.Field != "q" {
			t.Errorf("q=%q: %v", q, err)
		}
	}
}

// TestASnippetHighlightsOnlyTheWordsSearchedFor checks issue 28 item 8: a
// section written with Markdown emphasis used to come back with its own
// ** marks, which the console showed as matches; the index holds the
// text a reader sees, so every highlighted word is one searched for.
func TestASnippetHighlightsOnlyTheWordsSearchedFor(t *testing.T) {
	t.Parallel()
	ix, _ := setup(t)
	ctx := context.Background()
	md := "## Page messaging\n- **One row per conversation is the lock.** A user's write upserts the conversation; `SELECT … FOR UPDATE` takes it.\n"
	if err := ix.Refresh(ctx, Sections("docs/DECISIONS.md", []byte(md))); err != nil {
		t.Fatal(err)
	}
	hits, err := ix.Search(ctx, "upserts")
	if err != nil || len(hits) != 1 {
		t.Fatalf("hits %+v, %v", hits, err)
	}
	parts := strings.Split(hits[0].Snippet, "**")
	if len(parts) < 3 {
		t.Fatalf("snippet %q highlights nothing", hits[0].Snippet)
	}
	for i := 1; i < len(parts); i += 2 {
		if parts[i] != "upserts" {
			t.Errorf("snippet %q highlights %q", hits[0].Snippet, parts[i])
		}
	}
}
