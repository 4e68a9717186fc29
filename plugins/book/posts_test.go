package main

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"google.golang.org/protobuf/proto"

	bookv1 "github.com/svcplatform/svc/gen/svc/book/v1"
	"github.com/svcplatform/svc/internal/readpool"
	booksql "github.com/svcplatform/svc/plugins/book/sql"
	"github.com/svcplatform/svc/sdk"
	"github.com/svcplatform/svc/sdk/plugintest"
)

func TestMain(m *testing.M) { plugintest.Main(m, "book", booksql.Migrations()) }

const (
	page      = "501"
	pageAdmin = "7"  // an admin of page
	linkedApp = "90" // an app linked to page
)

var (
	admin    = sdk.Principal{Kind: sdk.TokenKindUser, UserID: pageAdmin, AppID: linkedApp}
	stranger = sdk.Principal{Kind: sdk.TokenKindUser, UserID: "8", AppID: "91"}
)

type bundle struct {
	tp   *plugintest.Plugin
	pool *pgxpool.Pool
	svc  *service
}

// setup runs the book plugin in-process on a fresh database, as main does.
func setup(t *testing.T) *bundle {
	t.Helper()
	pool := plugintest.Database(t)
	p := sdk.New(sdk.Info{Name: "book", Version: version, Events: []string{EventPostCreated}})
	db, err := readpool.Open(pool, 4, p.Logger())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	svc := newService(pool, db)
	svc.register(p)
	return &bundle{tp: plugintest.Start(t, p, plugintest.WithHost(plugintest.OnePage{PageID: page, Admins: []string{pageAdmin}, LinkedApps: []string{linkedApp}})), pool: pool, svc: svc}
}

func (b *bundle) post(t *testing.T, content string) (*bookv1.CreatePostResponse, error) {
	t.Helper()
	return plugintest.CallT[*bookv1.CreatePostResponse](t, b.tp, "/svc.book.v1.BookService/CreatePost", admin,
		&bookv1.CreatePostRequest{PageId: page, Content: content})
}

func (b *bundle) list(t *testing.T, limit int32, after, before string) *bookv1.ListPostsResponse {
	t.Helper()
	res, err := plugintest.CallT[*bookv1.ListPostsResponse](t, b.tp, "/svc.book.v1.BookService/ListPosts", admin,
		&bookv1.ListPostsRequest{PageId: page, Limit: limit, After: after, Before: before})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func contents(res *bookv1.ListPostsResponse) []string {
	var out []string
	for _, p := range res.GetData() {
		out = append(out, p.GetContent())
	}
	return out
}

func TestAPostAndItsBookPostCreatedEventAreStoredTogether(t *testing.T) {
	t.Parallel()
	b := setup(t)
	res, err := b.post(t, "Open on Sunday")
	if err != nil {
		t.Fatal(err)
	}
	if n := plugintest.Count(t, b.pool, "SELECT count(*) FROM book.posts WHERE id = $1 AND page_id = $2 AND author_user_id = $3 AND app_id = $4 AND audience = 'everyone'",
		res.GetId(), page, pageAdmin, linkedApp); n != 1 {
		t.Fatalf("%d posts stored as written", n)
	}
	// The data is exactly {"postId","pageId","content","audience"}.
	if n := plugintest.Count(t, b.pool, `SELECT count(*) FROM core.outbox WHERE type = $1 AND page_id = $2 AND app_id IS NULL
		AND ordering_key IS NULL AND data = jsonb_build_object('postId', $3::text, 'pageId', $2::text, 'content', $4::text, 'audience', 'everyone')`,
		EventPostCreated, page, res.GetId(), "Open on Sunday"); n != 1 {
		t.Fatalf("%d book.post.created events for the post", n)
	}
}

func TestPostsWrittenAtOnceAreCommittedTogetherEachWithItsOwnIdAndEvent(t *testing.T) {
	t.Parallel()
	b := setup(t)
	const n = 24
	ids := make(map[string]string) // id → content
	var mu sync.Mutex
	// Posts that arrive while one commits wait and commit together; a few
	// rounds make sure some did, on a machine however slow.
	for round := 0; round < 5 && b.svc.posts.Together() == 0; round++ {
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				content := fmt.Sprintf("round %d post %d", round, i)
				res, err := b.post(t, content)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				defer mu.Unlock()
				if _, dup := ids[res.GetId()]; dup {
					t.Errorf("id %s answered twice", res.GetId())
				}
				ids[res.GetId()] = content
			})
		}
		wg.Wait()
	}
	if b.svc.posts.Together() == 0 {
		t.Fatal("no posts were committed together")
	}
	for id, content := range ids {
		if c := plugintest.Count(t, b.pool, `SELECT count(*) FROM book.posts p JOIN core.outbox o ON o.data->>'postId' = p.id::text
			WHERE p.id = $1 AND p.content = $2 AND o.data->>'content' = $2 AND o.type = $3`, id, content, EventPostCreated); c != 1 {
			t.Errorf("post %s (%q): %d posts with their event as answered", id, content, c)
		}
	}
	if c := plugintest.Count(t, b.pool, "SELECT (SELECT count(*) FROM book.posts) - (SELECT count(*) FROM core.outbox)"); c != 0 || len(ids) < n {
		t.Errorf("%d answers; posts and events differ by %d", len(ids), c)
	}
}

func TestContentWithANulCharacterIsRefusedNamingContentAndStoresNothing(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, err := b.post(t, "a\x00b")
	if e := plugintest.WantRefusal(t, err, 400, 100, 0); e.Field != "content" {
		t.Fatalf("the refusal names %q", e.Field)
	}
	if n := plugintest.Count(t, b.pool, "SELECT (SELECT count(*) FROM book.posts) + (SELECT count(*) FROM core.outbox)"); n != 0 {
		t.Fatalf("a refused post stored %d rows", n)
	}
}

func TestPostsPageNewestFirstAndTheCursorsLeadBothWays(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for i := 1; i <= 5; i++ {
		if _, err := b.post(t, "post "+strconv.Itoa(i)); err != nil {
			t.Fatal(err)
		}
	}
	first := b.list(t, 2, "", "")
	if got := contents(first); len(got) != 2 || got[0] != "post 5" || got[1] != "post 4" {
		t.Fatalf("first page %v", got)
	}
	if !first.GetPaging().GetHasNext() || first.GetPaging().GetHasPrevious() {
		t.Fatalf("first page paging %v", first.GetPaging())
	}
	second := b.list(t, 2, first.GetPaging().GetAfter(), "")
	if got := contents(second); len(got) != 2 || got[0] != "post 3" || got[1] != "post 2" {
		t.Fatalf("second page %v", got)
	}
	back := b.list(t, 2, "", second.GetPaging().GetBefore())
	if got := contents(back); len(got) != 2 || got[0] != "post 5" || got[1] != "post 4" {
		t.Fatalf("back from the second page %v", got)
	}
	last := b.list(t, 2, second.GetPaging().GetAfter(), "")
	if got := contents(last); len(got) != 1 || got[0] != "post 1" || last.GetPaging().GetHasNext() {
		t.Fatalf("last page %v %v", got, last.GetPaging())
	}
}

func TestAListedPostIsThePostItsIdReadsOnEveryKindOfPage(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for i, content := range []string{"☕ café 咖啡 🚀", " ", strings.Repeat("long ", 3000), "short"} {
		audience := []string{"everyone", "followers", "only_me", ""}[i]
		if _, err := plugintest.CallT[*bookv1.CreatePostResponse](t, b.tp, "/svc.book.v1.BookService/CreatePost", admin,
			&bookv1.CreatePostRequest{PageId: page, Content: content, Audience: audience}); err != nil {
			t.Fatal(err)
		}
	}
	first := b.list(t, 2, "", "")
	second := b.list(t, 2, first.GetPaging().GetAfter(), "")
	back := b.list(t, 3, "", second.GetPaging().GetBefore())
	for _, res := range []*bookv1.ListPostsResponse{first, second, back} {
		if len(res.GetData()) != 2 {
			t.Fatalf("a page of %d posts, want 2: %v", len(res.GetData()), res)
		}
		for _, listed := range res.GetData() {
			read, err := plugintest.CallT[*bookv1.Post](t, b.tp, "/svc.book.v1.BookService/GetPost", admin, &bookv1.GetPostRequest{PostId: listed.GetId()})
			if err != nil {
				t.Fatal(err)
			}
			if !proto.Equal(listed, read) {
				t.Errorf("listed %v, read by its id %v", listed, read)
			}
		}
	}
}

func TestACursorTheListDidNotHandOutIsRefusedNamingIt(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, err := plugintest.CallT[*bookv1.ListPostsResponse](t, b.tp, "/svc.book.v1.BookService/ListPosts", admin,
		&bookv1.ListPostsRequest{PageId: page, After: "not-a-cursor"})
	if e := plugintest.WantRefusal(t, err, 400, 100, 0); e.Field != "after" {
		t.Fatalf("the refusal names %q", e.Field)
	}
}

func TestAPostIsReadByThePagesAdminOrALinkedAppAndNotFoundForAnyoneElse(t *testing.T) {
	t.Parallel()
	b := setup(t)
	created, err := b.post(t, "Hello")
	if err != nil {
		t.Fatal(err)
	}
	get := func(who sdk.Principal, id string) (*bookv1.Post, error) {
		return plugintest.CallT[*bookv1.Post](t, b.tp, "/svc.book.v1.BookService/GetPost", who, &bookv1.GetPostRequest{PostId: id})
	}
	for _, who := range []sdk.Principal{admin, {Kind: sdk.TokenKindAppKey, AppID: linkedApp}} {
		p, err := get(who, created.GetId())
		if err != nil || p.GetContent() != "Hello" || p.GetPageId() != page {
			t.Fatalf("%+v reads %v, %v", who, p, err)
		}
	}
	// Its existence is not revealed to a caller with no standing on the Page.
	_, err = get(stranger, created.GetId())
	plugintest.WantRefusal(t, err, 404, 100, 33)
}

func TestAPostIdThatNamesNothingAnswersNotFoundWhateverItsForm(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for _, id := range []string{"999999999999", "abc", "-1", "1e3", ""} {
		_, err := plugintest.CallT[*bookv1.Post](t, b.tp, "/svc.book.v1.BookService/GetPost", admin, &bookv1.GetPostRequest{PostId: id})
		plugintest.WantRefusal(t, err, 404, 100, 33)
	}
}

func TestListsReadAtOnceGoTogetherAndEachAnswersAsItWouldAlone(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for i := 1; i <= 12; i++ {
		if _, err := b.post(t, "post "+strconv.Itoa(i)); err != nil {
			t.Fatal(err)
		}
	}
	// The windows, and each one's answer read alone.
	first := b.list(t, 3, "", "")
	windows := []*bookv1.ListPostsRequest{
		{PageId: page, Limit: 3}, {PageId: page, Limit: 5}, {PageId: page, Limit: 3, After: first.GetPaging().GetAfter()},
		{PageId: page, Limit: 2, Before: b.list(t, 3, first.GetPaging().GetAfter(), "").GetPaging().GetBefore()},
		{PageId: page, Limit: 2, After: b.list(t, 12, "", "").GetPaging().GetAfter()}, // past the last post
	}
	alone := make([][]byte, len(windows))
	for i, w := range windows {
		alone[i] = listBytes(t, b, w)
	}
	if b.svc.lists.Together() != 0 {
		t.Fatal("a list read alone went with others")
	}
	// Lists that arrive while one is read wait and go together; a few
	// rounds make sure some did, on a machine however slow.
	for round := 0; round < 10 && b.svc.lists.Together() == 0; round++ {
		var wg sync.WaitGroup
		for i := range 8 * len(windows) {
			wg.Go(func() {
				w := windows[i%len(windows)]
				if got := listBytes(t, b, w); !bytes.Equal(got, alone[i%len(windows)]) {
					t.Errorf("window %v read with others answered differently from alone", w)
				}
			})
		}
		wg.Wait()
	}
	if b.svc.lists.Together() == 0 {
		t.Fatal("no lists were read together")
	}
}

// listBytes is the answer to req as protobuf encodes it.
func listBytes(t *testing.T, b *bundle, req *bookv1.ListPostsRequest) []byte {
	res, err := plugintest.CallT[*bookv1.ListPostsResponse](t, b.tp, "/svc.book.v1.BookService/ListPosts", admin, req)
	if err != nil {
		t.Error(err)
		return nil
	}
	out, err := proto.Marshal(res)
	if err != nil {
		t.Error(err)
	}
	return out
}
