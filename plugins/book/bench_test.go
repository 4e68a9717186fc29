package main

import (
	"context"
	"syscall"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	bookv1 "github.com/svcplatform/svc/gen/svc/book/v1"
	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
	"github.com/svcplatform/svc/internal/plugin/wire"
	"github.com/svcplatform/svc/internal/readpool"
	"github.com/svcplatform/svc/sdk"
	"github.com/svcplatform/svc/sdk/plugintest"
)

// BenchmarkListPosts measures the plugin's side of the Graph read
// page/<id>/posts?limit=10 (issue 15): the SDK decoding the call, the
// handler and its query against a real PostgreSQL, and encoding the answer,
// as the gateway's in-process transport runs it; cpu-µs/op is this
// process's CPU, PostgreSQL's not included. The fast lane's own part
// is BenchmarkFastLaneCall in sdk.
//
//	go test -run '^$' -bench ListPosts -benchmem ./plugins/book/
func BenchmarkListPosts(b *testing.B) {
	pool := plugintest.Database(b)
	ctx := context.Background()
	if _, err := pool.Exec(ctx, `INSERT INTO book.posts (page_id, author_user_id, content, audience)
		SELECT $1, $2, 'Seed post ' || n || ': coffee ☕ café 咖啡', 'everyone' FROM generate_series(1, 30) AS n`, page, pageAdmin); err != nil {
		b.Fatal(err)
	}
	p := sdk.New(sdk.Info{Name: "book", Version: version, Events: []string{EventPostCreated}})
	db, err := readpool.Open(pool, 4, p.Logger())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(db.Close)
	newService(pool, db).register(p)
	if _, err := wire.Manifest(p); err != nil {
		b.Fatal(err)
	}
	in, err := proto.Marshal(&bookv1.ListPostsRequest{PageId: page, Limit: 10})
	if err != nil {
		b.Fatal(err)
	}
	req := &pluginv1.InvokeRequest{Procedure: "/svc.book.v1.BookService/ListPosts", Request: in, Principal: wire.PrincipalToProto(admin), TraceId: "bench"}
	read := func() *bookv1.ListPostsResponse {
		resp := wire.Invoke(ctx, p, req)
		if resp.GetError() != nil {
			b.Fatal(wire.ErrorFromProto(resp.GetError()))
		}
		var res bookv1.ListPostsResponse
		if err := proto.Unmarshal(resp.GetResponse(), &res); err != nil {
			b.Fatal(err)
		}
		return &res
	}
	if res := read(); len(res.GetData()) != 10 || !res.GetPaging().GetHasNext() {
		b.Fatalf("the read answered %d posts (has next: %v), want 10 and a next page", len(res.GetData()), res.GetPaging().GetHasNext())
	}
	b.ReportAllocs()
	cpu := processCPU()
	for b.Loop() {
		if resp := wire.Invoke(ctx, p, req); resp.GetError() != nil {
			b.Fatal(wire.ErrorFromProto(resp.GetError()))
		}
	}
	b.ReportMetric(float64(processCPU()-cpu)/float64(time.Microsecond)/float64(b.N), "cpu-µs/op")
}

// processCPU is this process's user and system CPU time: the plugin's,
// not PostgreSQL's.
func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkCreatePost measures the plugin's side of the Graph write
// POST page/<id>/posts that make bench loads: the SDK decoding the call,
// the handler, its one statement writing the post and its
// book.post.created event against a real PostgreSQL, and encoding the
// answer; cpu-µs/op is this process's CPU, PostgreSQL's not included.
//
//	go test -run '^$' -bench CreatePost -benchmem ./plugins/book/
func BenchmarkCreatePost(b *testing.B) {
	pool := plugintest.Database(b)
	ctx := context.Background()
	p := sdk.New(sdk.Info{Name: "book", Version: version, Events: []string{EventPostCreated}})
	newService(pool, readpool.PrimaryOnly(pool)).register(p)
	if _, err := wire.Manifest(p); err != nil {
		b.Fatal(err)
	}
	in, err := proto.Marshal(&bookv1.CreatePostRequest{PageId: page, Content: "Benchmark post: ☕ 咖啡 🚀", Audience: "everyone"})
	if err != nil {
		b.Fatal(err)
	}
	req := &pluginv1.InvokeRequest{Procedure: "/svc.book.v1.BookService/CreatePost", Request: in, Principal: wire.PrincipalToProto(admin), TraceId: "bench"}
	b.ReportAllocs()
	cpu := processCPU()
	for b.Loop() {
		if resp := wire.Invoke(ctx, p, req); resp.GetError() != nil {
			b.Fatal(wire.ErrorFromProto(resp.GetError()))
		}
	}
	b.ReportMetric(float64(processCPU()-cpu)/float64(time.Microsecond)/float64(b.N), "cpu-µs/op")
}
