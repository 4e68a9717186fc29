package dispatch

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
	"github.com/svcplatform/svc/gateway/internal/graph"
	"github.com/svcplatform/svc/gateway/internal/identity"
	"github.com/svcplatform/svc/gateway/internal/identity/identitytest"
	"github.com/svcplatform/svc/gateway/internal/observe"
	"github.com/svcplatform/svc/gateway/internal/route"
	"github.com/svcplatform/svc/gateway/internal/server"
	bookv1 "github.com/svcplatform/svc/gen/svc/book/v1"
	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
	"github.com/svcplatform/svc/internal/plugin/manifestcheck"
	"github.com/svcplatform/svc/internal/plugin/protocol"
	"github.com/svcplatform/svc/internal/plugin/protocol/lanetest"
	"github.com/svcplatform/svc/internal/plugin/wire"
	"github.com/svcplatform/svc/sdk"
)

// BenchmarkGraphRead measures the gateway's own work on the Graph read that
// make bench loads, GET page/<id>/posts?limit=10 with a user token, through
// the whole HTTP handler: trace id, version, body limit, authentication
// (cached), the Graph layer (parse, match, bind, limiter), validation,
// authorization (cached Page facts), the call and the wire renderer with
// its paging links. net/http's own parsing and response buffering are not
// in it.
//
// "in-process" answers from the book service's handlers run as the
// gateway's own services are (so the SDK's decode and encode of the call
// count too); "fast-lane" answers over a fast lane from a plugin served in
// this process (its side of the lane and the SDK's work count too), with a
// fresh cancellable context per request as net/http gives one: the
// gateway's whole path but for net/http and the sockets' system calls.
//
//	go test -run '^$' -bench GraphRead -benchmem ./gateway/internal/dispatch/
func BenchmarkGraphRead(b *testing.B) {
	b.Run("in-process", func(b *testing.B) {
		w, book, authn := graphReadWorld(b, tenPosts)
		benchGraphReads(b, w, inProcessGateway(b, book, authn), false)
	})
	b.Run("fast-lane", func(b *testing.B) {
		w, book, authn := graphReadWorld(b, tenPosts)
		benchGraphReads(b, w, fastLaneGateway(b, book, authn), true)
	})
}

// graphGateway is a gateway's server and dispatcher, authorizing with a
// real authenticator, and the sources its route table is built of once
// the Graph is served (serveGraph).
type graphGateway struct {
	srv     *server.Server
	d       *Dispatcher
	sources []route.Source
}

// newGraphGateway is a graphGateway whose core is core.
func newGraphGateway(tb testing.TB, core *sdk.Plugin, authn *auth.Authenticator) graphGateway {
	d, err := New(Options{Auth: authn, Core: core, Calls: observe.NewCalls(observe.NewMetrics())})
	if err != nil {
		tb.Fatal(err)
	}
	srv := server.New(server.Options{Metrics: observe.NewMetrics(), Authenticate: Authenticate(authn), Calls: d})
	return graphGateway{srv: srv, d: d, sources: []route.Source{d.core}}
}

// inProcessGateway serves book as the gateway's own services are.
func inProcessGateway(tb testing.TB, book *sdk.Plugin, authn *auth.Authenticator) graphGateway {
	return newGraphGateway(tb, book, authn)
}

// listPosts answers the book service's ListPosts for the World's Page.
type listPosts func(req *bookv1.ListPostsRequest) *bookv1.ListPostsResponse

// tenPosts answers ten fixed posts of the Page, whatever the request.
func tenPosts(pageID string) listPosts {
	posts := &bookv1.ListPostsResponse{Paging: &pluginv1.Paging{Before: "MTAwMDAwMTAwMA", After: "MTAwMDAwMDk5MQ", HasNext: true}}
	for i := range 10 {
		posts.Data = append(posts.Data, &bookv1.Post{Id: strconv.Itoa(1000001000 - i), PageId: pageID,
			Content: "Seed post " + strconv.Itoa(i) + ": coffee ☕ café 咖啡", Audience: "everyone", CreatedTime: "2026-11-24T04:05:39Z"})
	}
	return func(*bookv1.ListPostsRequest) *bookv1.ListPostsResponse { return posts }
}

// createPost answers the book service's CreatePost.
type createPost func(req *bookv1.CreatePostRequest) *bookv1.CreatePostResponse

// fixedPostID answers every CreatePost with the same new post's id.
func fixedPostID(*bookv1.CreatePostRequest) *bookv1.CreatePostResponse {
	return &bookv1.CreatePostResponse{Id: "1000002000"}
}

// graphReadWorld is a fresh database with the World's Page, and the book
// service answering ListPosts with answers(the Page's id) and CreatePost
// with a fixed id.
func graphReadWorld(tb testing.TB, answers func(pageID string) listPosts) (*identitytest.World, *sdk.Plugin, *auth.Authenticator) {
	return graphWorld(tb, answers, fixedPostID)
}

// graphWorld is a fresh database with the World's Page, and the book
// service answering ListPosts with answers(the Page's id) and CreatePost
// with create.
func graphWorld(tb testing.TB, answers func(pageID string) listPosts, create createPost) (*identitytest.World, *sdk.Plugin, *auth.Authenticator) {
	w := identitytest.NewWorld(tb)
	book := sdk.New(sdk.Info{Name: "book", Version: "bench"})
	list := answers(w.Page.ID)
	methods := bookv1.File_svc_book_v1_book_proto.Services().ByName("BookService").Methods()
	sdk.Handle(book, methods.ByName("ListPosts"), func(_ context.Context, _ *sdk.Call, req *bookv1.ListPostsRequest) (*bookv1.ListPostsResponse, error) {
		return list(req), nil
	})
	sdk.Handle(book, methods.ByName("CreatePost"), func(_ context.Context, _ *sdk.Call, req *bookv1.CreatePostRequest) (*bookv1.CreatePostResponse, error) {
		return create(req), nil
	})
	// The service's other methods, so that the SDK does not warn of them.
	sdk.Handle(book, methods.ByName("GetPost"), func(_ context.Context, _ *sdk.Call, req *bookv1.GetPostRequest) (*bookv1.Post, error) {
		return &bookv1.Post{Id: req.GetPostId(), PageId: w.Page.ID}, nil
	})
	return w, book, auth.New(w.IDs, auth.Options{})
}

// fastLaneGateway serves book over a fast lane in this process, authorized
// by authn as the gateway does.
func fastLaneGateway(tb testing.TB, book *sdk.Plugin, authn *auth.Authenticator) graphGateway {
	manifest, err := wire.Manifest(book)
	if err != nil {
		tb.Fatal(err)
	}
	// The dispatcher's core is not in the table: book is served over the lane only.
	checked, err := manifestcheck.Check(manifest)
	if err != nil {
		tb.Fatal(err)
	}
	g := newGraphGateway(tb, book, authn)
	g.sources = []route.Source{{Plugin: checked, Invoker: laneInvoker{serveLane(tb, book)}}}
	return g
}

// serveLane serves p on a fast lane in this process and dials it.
func serveLane(tb testing.TB, p *sdk.Plugin) *protocol.LaneClient {
	return lanetest.Dial(tb, &protocol.LaneServer{Allow: func(int) bool { return true },
		Handler: func(ctx context.Context, req *pluginv1.InvokeRequest) *pluginv1.InvokeResponse {
			return wire.Invoke(ctx, p, req)
		}}, 1)
}

// laneInvoker calls a plugin over a fast lane, as the host does.
type laneInvoker struct{ lane *protocol.LaneClient }

func (l laneInvoker) Invoke(ctx context.Context, req *pluginv1.InvokeRequest) (*pluginv1.InvokeResponse, error) {
	return l.lane.Invoke(ctx, req)
}

func (l laneInvoker) InvokeInto(ctx context.Context, req *pluginv1.InvokeRequest, answer []byte) (*pluginv1.InvokeResponse, error) {
	return l.lane.InvokeInto(ctx, req, answer)
}

// benchGraphReads issues the read with a user token of the World's owner
// on g's server; cancellable gives each request a context of its own, as
// net/http does.
func benchGraphReads(b *testing.B, w *identitytest.World, g graphGateway, cancellable bool) {
	plain := serveGraph(b, w, g)
	srv := g.srv
	r := httptest.NewRequest(http.MethodGet, graph.Path+"?node=page/"+w.Page.ID+"/posts&limit=10", nil)
	r.Header.Set("Authorization", "Bearer "+plain)
	rw := &benchWriter{header: http.Header{}}
	read := func() {
		req := r
		if cancellable {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			req = r.WithContext(ctx)
		}
		rw.reset()
		srv.ServeHTTP(rw, req)
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

// SetReadDeadline stands for the connection's, which the body limit sets
// while a body is read (http.ResponseController); a writer without it
// would cost an error per request that net/http's does not.
func (w *benchWriter) SetReadDeadline(time.Time) error { return nil }

func (w *benchWriter) reset() {
	clear(w.header)
	w.status = 0
	w.body = w.body[:0]
}

// benchLimits are the default rate limits with room for a long benchmark
// run (an in-process write can pass the default 600,000 a minute per Page).
var benchLimits = graph.Limits{App: 1 << 40, User: 1 << 40, Page: 1 << 40, Window: graph.DefaultLimits.Window}

// graphPublicURL is the public URL the Graph's paging links start with.
const graphPublicURL = "http://127.0.0.1:8080"

// serveGraph serves the Graph on g's server, as the gateway does (an
// access_token parameter read by an authenticator of w's), builds g's
// route table, and returns a user token of the World's owner with scopes
// (pages:read when none are given).
func serveGraph(tb testing.TB, w *identitytest.World, g graphGateway, scopes ...string) string {
	h := graph.New(graph.Options{PublicURL: graphPublicURL, Dispatcher: g.d,
		Limiter: graph.NewLimiter(benchLimits), AccessToken: auth.New(w.IDs, auth.Options{}).AccessToken})
	g.srv.Handle(graph.Path, h)
	g.d.Follow(g.srv, h)
	if err := g.d.publish(g.sources); err != nil {
		tb.Fatal(err)
	}
	if len(scopes) == 0 {
		scopes = []string{"pages:read"}
	}
	plain, hash := identity.NewToken("bench_")
	userID, _ := identity.ParseID(w.Owner.ID)
	appID, _ := identity.ParseID(w.App.ID)
	if err := w.IDs.Queries().InsertCredential(context.Background(), coredb.InsertCredentialParams{TokenHash: hash,
		Kind: int16(pluginv1.TokenKind_TOKEN_KIND_USER), UserID: &userID, AppID: &appID, Scopes: scopes,
		ExpiresAt: pgtype.Timestamptz{Time: time.Now().Add(time.Hour), Valid: true}}); err != nil {
		tb.Fatal(err)
	}
	return plain
}
