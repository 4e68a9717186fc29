package bookdb

import (
	"context"
	"reflect"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	booksql "github.com/svcplatform/svc/plugins/book/sql"
	"github.com/svcplatform/svc/sdk/plugintest"
)

func TestMain(m *testing.M) { plugintest.Main(m, "book", booksql.Migrations()) }

// collect runs one of the lists' statements, reads its rows with EachPost
// and copies what it hands over into BookPosts, as a caller keeping the
// rows would.
func collect(t *testing.T, pool *pgxpool.Pool, pq PostQuery) []BookPost {
	t.Helper()
	rows, err := pool.Query(context.Background(), pq.SQL, pq.Args...)
	if err != nil {
		t.Fatal(err)
	}
	var out []BookPost
	err = EachPost(rows, func(r *PostRow) error {
		out = append(out, BookPost{ID: r.ID, PageID: string(r.PageID), AuthorUserID: string(r.AuthorUserID), AppID: string(r.AppID),
			Content: string(r.Content), Audience: string(r.Audience), CreatedAt: r.CreatedAt})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestTheHandWrittenListReadersReadWhatSqlcsListQueriesRead(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := plugintest.Database(t)
	// Two Pages, every audience, an app and none, text beyond ASCII, an
	// empty-looking and a long content, times apart.
	if _, err := pool.Exec(ctx, `INSERT INTO book.posts (page_id, author_user_id, app_id, content, audience, created_at)
		SELECT CASE WHEN n % 5 = 0 THEN '602' ELSE '601' END, (7 + n % 3)::text, CASE WHEN n % 2 = 0 THEN '90' ELSE '' END,
		       CASE n % 4 WHEN 0 THEN 'post ' || n || ' ☕ café 咖啡 🚀' WHEN 1 THEN ' ' WHEN 2 THEN repeat('long ', 2000) ELSE 'p' || n END,
		       (ARRAY['everyone', 'followers', 'only_me'])[1 + n % 3],
		       timestamptz '2026-01-02 03:04:05.678901+00' + n * interval '1 hour 7 seconds'
		FROM generate_series(1, 40) AS n`); err != nil {
		t.Fatal(err)
	}
	q := New(pool)
	var ids []int64
	if err := pool.QueryRow(ctx, `SELECT array_agg(id ORDER BY id) FROM book.posts WHERE page_id = '601'`).Scan(&ids); err != nil {
		t.Fatal(err)
	}
	cursors := []int64{ids[0], ids[len(ids)/2], ids[len(ids)-1], ids[len(ids)-1] + 1000, 1}
	for _, pageID := range []string{"601", "602", "603"} {
		for _, lim := range []int32{1, 3, 11, 101} {
			first := ListPostsFirstParams{PageID: pageID, Lim: lim}
			want, err := q.ListPostsFirst(ctx, first)
			if err != nil {
				t.Fatal(err)
			}
			if got := collect(t, pool, PostsFirst(first)); !reflect.DeepEqual(got, want) {
				t.Errorf("PostsFirst(%+v) read %v, ListPostsFirst %v", first, got, want)
			}
			for _, cursor := range cursors {
				after := ListPostsAfterParams{PageID: pageID, Cursor: cursor, Lim: lim}
				want, err := q.ListPostsAfter(ctx, after)
				if err != nil {
					t.Fatal(err)
				}
				if got := collect(t, pool, PostsAfter(after)); !reflect.DeepEqual(got, want) {
					t.Errorf("PostsAfter(%+v) read %v, ListPostsAfter %v", after, got, want)
				}
				before := ListPostsBeforeParams{PageID: pageID, Cursor: cursor, Lim: lim}
				if want, err = q.ListPostsBefore(ctx, before); err != nil {
					t.Fatal(err)
				}
				if got := collect(t, pool, PostsBefore(before)); !reflect.DeepEqual(got, want) {
					t.Errorf("PostsBefore(%+v) read %v, ListPostsBefore %v", before, got, want)
				}
			}
		}
	}
}
