package dispatch_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgtype"

	"github.com/svcplatform/svc/gateway/internal/auth"
	"github.com/svcplatform/svc/gateway/internal/coredb"
	"github.com/svcplatform/svc/gateway/internal/dispatch"
	"github.com/svcplatform/svc/gateway/internal/graph"
	"github.com/svcplatform/svc/gateway/internal/identity"
	"github.com/svcplatform/svc/gateway/internal/identity/identitytest"
	"github.com/svcplatform/svc/gateway/internal/observe"
	"github.com/svcplatform/svc/gateway/internal/server"
	bookv1 "github.com/svcplatform/svc/gen/svc/book/v1"
	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
	"github.com/svcplatform/svc/plugins/sdk"
)

// BenchmarkGraphRead measures the gateway's own work on the Graph read that
// make bench loads, GET page/<id>/posts?limit=10 with a user token, through
// the whole HTTP handler: trace id, version, body limit, authentication
// (cached), the Graph layer (parse, match, bind, limiter), validation,
// authorization (cached Page facts), the call and the wire renderer with
// its paging links. The answer comes from an in-process handler with ten
// fixed posts, so the figures are the gateway's (plus the SDK's in-process
// decode and encode of the call), without the hop's socket or PostgreSQL;
// BenchmarkHop measures the hop. net/http's own parsing and response
// buffering are not in it either.
//
//	go test -run '^$' -bench GraphRead -benchmem ./gateway/internal/dispatch/
func BenchmarkGraphRead(b *testing.B) {
	w := identitytest.NewWorld(b)
	authn := auth.New(w.IDs, auth.Options{})
	core := sdk.New(sdk.Info{Name: "core", Version: "bench"})
	posts := &bookv1.ListPostsResponse{Paging: &pluginv1.Paging{Before: "MTAwMDAwMTAwMA", After: "MTAwMDAwMDk5MQ", HasNext: true}}
	for i := range 10 {
		posts.Data = append(posts.Data, &bookv1.Post{Id: strconv.Itoa(1000001000 - i), PageId: w.Page.ID,
			Content: "Seed post " + strconv.Itoa(i) + ": coffee ☕ café 咖啡", Audience: "everyone", CreatedTime: "2026-11-24T04:05:39Z"})
	}
	book := bookv1.File_svc_book_v1_book_proto.Services().ByName("BookService").Methods()
	sdk.Handle(core, book.ByName("ListPosts"), func(context.Context, *sdk.Call, *bookv1.ListPostsRequest) (*bookv1.ListPostsResponse, error) {
		return posts, nil
	})
	// The service's other methods, so that the SDK does not warn of them.
	sdk.Handle(core, book.ByName("GetPost"), func(context.Context, *sdk.Call, *bookv1.GetPostRequest) (*bookv1.Post, error) {
		return posts.Data[0], nil
	})
	sdk.Handle(core, book.ByName("CreatePost"), func(context.Context, *sdk.Call, *bookv1.CreatePostRequest) (*bookv1.CreatePostResponse, error) {
		return &bookv1.CreatePostResponse{}, nil
	})
	srv := server.New(server.Options{Metrics: observe.NewMetrics(), Authenticate: dispatch.Authenticate(authn)})
	d, err := dispatch.New(dispatch.Options{Server: srv, Auth: authn, Core: core, Calls: observe.NewCalls(observe.NewMetrics())})
	if err != nil {
		b.Fatal(err)
	}
	if err := d.Rebuild(nil); err != nil {
		b.Fatal(err)
	}
	srv.Handle(graph.Path, graph.New(graph.Options{PublicURL: "http://127.0.0.1:8080", Router: d.GraphRouter,
		Limiter: graph.NewLimiter(graph.DefaultLimits), Caller: dispatch.Caller}))

	plain, hash := identity.NewToken("bench_")
	userID, _ := identity.ParseID(w.Owner.ID)
	appID, _ := identity.ParseID(w.App.ID)
	if err := w.IDs.Queries().InsertCredential(context.Background(), coredb.InsertCredentialParams{TokenHash: hash,
		Kind: int16(pluginv1.TokenKind_TOKEN_KIND_USER), UserID: &userID, AppID: &appID, Scopes: []string{"pages:read"},
		ExpiresAt: pgtype.Timestamptz{Time: time.Now().Add(time.Hour), Valid: true}}); err != nil {
		b.Fatal(err)
	}
	r := httptest.NewRequest(http.MethodGet, graph.Path+"?node=page/"+w.Page.ID+"/posts&limit=10", nil)
	r.Header.Set("Authorization", "Bearer "+plain)
	rw := &benchWriter{header: http.Header{}}
	srv.ServeHTTP(rw, r)
	if rw.status != http.StatusOK {
		b.Fatalf("status %d: %s", rw.status, rw.body)
	}
	b.ReportAllocs()
	for b.Loop() {
		rw.reset()
		srv.ServeHTTP(rw, r)
		if rw.status != http.StatusOK {
			b.Fatalf("status %d: %s", rw.status, rw.body)
		}
	}
}

// benchWriter is a ResponseWriter that keeps the last answer and allocates
// nothing of its own per request once warm, as net/http's buffered writer.
type benchWriter struct {
	header http.Header
	status int
	body   []byte
}

func (w *benchWriter) Header() http.Header { return w.header }

func (w *benchWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
}

func (w *benchWriter) Write(b []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	w.body = append(w.body, b...)
	return len(b), nil
}

func (w *benchWriter) reset() {
	clear(w.header)
	w.status = 0
	w.body = w.body[:0]
}
