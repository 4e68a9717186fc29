package dispatch

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgtype"

	"github.com/svcplatform/svc/gateway/internal/auth"
	"github.com/svcplatform/svc/gateway/internal/coredb"
	"github.com/svcplatform/svc/gateway/internal/graph"
	"github.com/svcplatform/svc/gateway/internal/identity"
	"github.com/svcplatform/svc/gateway/internal/identity/identitytest"
	"github.com/svcplatform/svc/gateway/internal/observe"
	"github.com/svcplatform/svc/gateway/internal/route"
	"github.com/svcplatform/svc/gateway/internal/server"
	bookv1 "github.com/svcplatform/svc/gen/svc/book/v1"
	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
	"github.com/svcplatform/svc/plugins/sdk"
	"github.com/svcplatform/svc/plugins/sdk/protocol"
	"github.com/svcplatform/svc/plugins/sdk/wire"
)

// laneInvoker calls a plugin over a fast lane, as the host does.
type laneInvoker struct{ lane *protocol.LaneClient }

func (l laneInvoker) Invoke(ctx context.Context, req *pluginv1.InvokeRequest) (*pluginv1.InvokeResponse, error) {
	return l.lane.Invoke(ctx, req)
}

func (l laneInvoker) InvokeInto(ctx context.Context, req *pluginv1.InvokeRequest, answer []byte) (*pluginv1.InvokeResponse, error) {
	return l.lane.InvokeInto(ctx, req, answer)
}

// BenchmarkGraphReadOverTheLane is BenchmarkGraphRead with the answer
// coming over a fast lane, from a plugin served in this process (its side
// of the lane and the SDK's work count too), and a fresh cancellable
// context per request as net/http gives one: the gateway's whole path of
// the read but for net/http's own parsing and writing and the sockets'
// system calls.
//
//	go test -run '^$' -bench GraphReadOverTheLane -benchmem ./gateway/internal/dispatch/
func BenchmarkGraphReadOverTheLane(b *testing.B) {
	w := identitytest.NewWorld(b)
	authn := auth.New(w.IDs, auth.Options{})
	book := sdk.New(sdk.Info{Name: "book", Version: "bench"})
	posts := &bookv1.ListPostsResponse{Paging: &pluginv1.Paging{Before: "MTAwMDAwMTAwMA", After: "MTAwMDAwMDk5MQ", HasNext: true}}
	for i := range 10 {
		posts.Data = append(posts.Data, &bookv1.Post{Id: strconv.Itoa(1000001000 - i), PageId: w.Page.ID,
			Content: "Seed post " + strconv.Itoa(i) + ": coffee ☕ café 咖啡", Audience: "everyone", CreatedTime: "2026-11-24T04:05:39Z"})
	}
	methods := bookv1.File_svc_book_v1_book_proto.Services().ByName("BookService").Methods()
	sdk.Handle(book, methods.ByName("ListPosts"), func(context.Context, *sdk.Call, *bookv1.ListPostsRequest) (*bookv1.ListPostsResponse, error) {
		return posts, nil
	})
	sdk.Handle(book, methods.ByName("GetPost"), func(context.Context, *sdk.Call, *bookv1.GetPostRequest) (*bookv1.Post, error) {
		return posts.Data[0], nil
	})
	sdk.Handle(book, methods.ByName("CreatePost"), func(context.Context, *sdk.Call, *bookv1.CreatePostRequest) (*bookv1.CreatePostResponse, error) {
		return &bookv1.CreatePostResponse{}, nil
	})
	manifest, err := wire.Manifest(book)
	if err != nil {
		b.Fatal(err)
	}

	dir, err := os.MkdirTemp("", "lane")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = os.RemoveAll(dir) })
	path := filepath.Join(dir, protocol.FastLaneSocket)
	ln, err := net.Listen("unix", path)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = ln.Close() })
	srvLane := &protocol.LaneServer{Allow: func(int) bool { return true },
		Handler: func(ctx context.Context, req *pluginv1.InvokeRequest) *pluginv1.InvokeResponse {
			return wire.Invoke(ctx, book, req)
		}}
	go func() { _ = srvLane.Serve(ln) }()
	lane, err := protocol.DialLane(context.Background(), path, 1, 0)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = lane.Close() })

	table, err := route.Build([]route.Source{{Name: "book", Manifest: manifest, Invoker: laneInvoker{lane}}}, guard{a: authn})
	if err != nil {
		b.Fatal(err)
	}
	router := graph.NewRouter(table)
	srv := server.New(server.Options{Metrics: observe.NewMetrics(), Authenticate: Authenticate(authn)})
	srv.Handle(graph.Path, graph.New(graph.Options{PublicURL: "http://127.0.0.1:8080", Router: func() *graph.Router { return router },
		Limiter: graph.NewLimiter(graph.DefaultLimits), Caller: Caller}))

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
	rw := &laneBenchWriter{header: http.Header{}}
	read := func() {
		ctx, cancel := context.WithCancel(context.Background())
		rw.reset()
		srv.ServeHTTP(rw, r.WithContext(ctx))
		cancel()
		if rw.status != http.StatusOK {
			b.Fatalf("status %d: %s", rw.status, rw.body)
		}
	}
	read()
	b.ReportAllocs()
	for b.Loop() {
		read()
	}
}

// laneBenchWriter is a ResponseWriter that keeps the last answer and
// allocates nothing of its own once warm.
type laneBenchWriter struct {
	header http.Header
	status int
	body   []byte
}

func (w *laneBenchWriter) Header() http.Header { return w.header }

func (w *laneBenchWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
}

func (w *laneBenchWriter) Write(b []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	w.body = append(w.body, b...)
	return len(b), nil
}

func (w *laneBenchWriter) reset() {
	clear(w.header)
	w.status = 0
	w.body = w.body[:0]
}
