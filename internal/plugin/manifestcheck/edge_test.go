package manifestcheck_test

import (
	"context"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"

	bookv1 "github.com/svcplatform/svc/gen/svc/book/v1"
	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
	"github.com/svcplatform/svc/internal/plugin/manifestcheck"
	"github.com/svcplatform/svc/internal/plugin/wire"
	"github.com/svcplatform/svc/sdk"
)

// embedManifest is the book plugin's plain HTTP paths (/posts/ as a
// prefix, /api/v1/oembed, /embed.js), with change applied to their
// http_path options.
func embedManifest(t *testing.T, change func(map[string]*pluginv1.HttpPath)) *pluginv1.Manifest {
	t.Helper()
	p := sdk.New(sdk.Info{Name: "book", Version: "1"})
	methods := bookv1.File_svc_book_v1_book_proto.Services().ByName("BookService").Methods()
	for _, name := range []protoreflect.Name{"PublicPostPage", "OEmbed", "EmbedScript"} {
		sdk.Handle(p, methods.ByName(name), func(context.Context, *sdk.Call, *pluginv1.HttpRequest) (*pluginv1.HttpResponse, error) {
			return &pluginv1.HttpResponse{}, nil
		})
	}
	m, err := wire.Manifest(p)
	if err != nil {
		t.Fatal(err)
	}
	paths := map[string]*pluginv1.HttpPath{}
	var mds []*descriptorpb.MethodDescriptorProto
	for _, f := range m.GetFiles().GetFile() {
		if f.GetPackage() == "svc.book.v1" {
			mds = f.GetService()[0].GetMethod()
		}
	}
	for _, md := range mds {
		if hp, ok := proto.GetExtension(md.GetOptions(), pluginv1.E_HttpPath).(*pluginv1.HttpPath); ok && hp != nil {
			paths[md.GetName()] = hp
		}
	}
	if change != nil {
		change(paths)
		for _, md := range mds {
			if hp, ok := paths[md.GetName()]; ok {
				proto.SetExtension(md.Options, pluginv1.E_HttpPath, hp)
			}
		}
	}
	return m
}

func TestAPrefixPathAndAOneSegmentFilePathAreAccepted(t *testing.T) {
	t.Parallel()
	p, err := manifestcheck.Check(embedManifest(t, nil))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, m := range p.Methods {
		if h := m.Edge.HTTP(); h != "" {
			got[h] = true
		}
	}
	for _, want := range []string{"GET /posts/*", "GET /api/v1/oembed", "GET /embed.js"} {
		if !got[want] {
			t.Errorf("bindings %v lack %s", got, want)
		}
	}
}

func TestAPlainHTTPPathBreakingARuleIsRefused(t *testing.T) {
	t.Parallel()
	for rule, change := range map[string]func(map[string]*pluginv1.HttpPath){
		"a prefix ends in a slash": func(ps map[string]*pluginv1.HttpPath) { ps["PublicPostPage"].Get = "/posts" },
		"a prefix is a get path": func(ps map[string]*pluginv1.HttpPath) {
			ps["PublicPostPage"].Get, ps["PublicPostPage"].Post = "", "/posts/"
		},
		"a prefix is under a first segment":  func(ps map[string]*pluginv1.HttpPath) { ps["PublicPostPage"].Get = "/" },
		"a dotted first segment is an RPC's": func(ps map[string]*pluginv1.HttpPath) { ps["EmbedScript"].Get = "/svc.book.v1.BookService/EmbedScript" },
		"a file is not hidden":               func(ps map[string]*pluginv1.HttpPath) { ps["EmbedScript"].Get = "/.embed.js" },
	} {
		if _, err := manifestcheck.Check(embedManifest(t, change)); err == nil || !strings.Contains(err.Error(), "http_path") {
			t.Errorf("%s: Check = %v, want an http_path refusal", rule, err)
		}
	}
}
