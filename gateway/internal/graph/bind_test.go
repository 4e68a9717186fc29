package graph

import (
	"encoding/json"
	"net/url"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/svcplatform/svc/gateway/internal/apierr"
	bookv1 "github.com/svcplatform/svc/gen/svc/book/v1"
	"github.com/svcplatform/svc/internal/plugin/manifestcheck"
)

var (
	createPost = (&bookv1.CreatePostRequest{}).ProtoReflect().Descriptor()
	listPosts  = (&bookv1.ListPostsRequest{}).ProtoReflect().Descriptor()
)

// pageVars are the variables of the node page/<id>/posts.
func pageVars(t testing.TB, id string) manifestcheck.NodeVars {
	t.Helper()
	p, err := manifestcheck.CompilePattern("page/{page_id}/posts")
	if err != nil {
		t.Fatal(err)
	}
	vars, ok := p.Match([]string{"page", id, "posts"})
	if !ok {
		t.Fatal("page/<id>/posts does not match its pattern")
	}
	return vars
}

func TestBindBodyNamesTheOffendingField(t *testing.T) {
	t.Parallel()
	vars := pageVars(t, "7")
	cases := map[string]string{
		`{"content":"hi","colour":"red"}`: "colour",
		`{"content":5}`:                   "content",
		`{"content":["a"]}`:               "content",
		`{"audience":{"x":1}}`:            "audience",
		`{"page_id":"8","content":"x"}`:   "page_id",
	}
	for body, field := range cases {
		var m map[string]json.RawMessage
		if err := json.Unmarshal([]byte(body), &m); err != nil {
			t.Fatal(err)
		}
		err := bindBody(dynamicpb.NewMessage(createPost), m, vars)
		e, ok := apierr.As(err)
		if !ok || e.Code != 100 || e.Field != field {
			t.Errorf("%s: err = %v, want code 100 naming %s", body, err, field)
		}
	}
	var m map[string]json.RawMessage
	_ = json.Unmarshal([]byte(`{"node":"page/7/posts","content":"héllo","audience":"followers","page_id":"7"}`), &m)
	msg := dynamicpb.NewMessage(createPost)
	if err := bindBody(msg, m, vars); err != nil {
		t.Fatal(err)
	}
	if got := msg.Get(createPost.Fields().ByName("content")).String(); got != "héllo" {
		t.Fatalf("content = %q", got)
	}
}

func TestBindQueryAndLimit(t *testing.T) {
	t.Parallel()
	msg := dynamicpb.NewMessage(listPosts)
	if err := bindQuery(msg, url.Values{"node": {"x"}, "after": {"abc"}}, manifestcheck.NodeVars{}); err != nil {
		t.Fatal(err)
	}
	if err := applyLimit(msg); err != nil || msg.Get(listPosts.Fields().ByName("limit")).Int() != DefaultLimit {
		t.Fatalf("default limit not applied: %v", err)
	}
	for q, field := range map[string]string{"limit=abc": "limit", "limit=1&limit=2": "limit", "colour=red": "colour", "page_id=9": "page_id"} {
		v, _ := url.ParseQuery(q)
		err := bindQuery(dynamicpb.NewMessage(listPosts), v, pageVars(t, "7"))
		if e, ok := apierr.As(err); !ok || e.Field != field {
			t.Errorf("%s: err = %v, want a refusal naming %s", q, err, field)
		}
	}
	over := dynamicpb.NewMessage(listPosts)
	_ = bindQuery(over, url.Values{"limit": {"101"}}, manifestcheck.NodeVars{})
	if e, ok := apierr.As(applyLimit(over)); !ok || e.Field != "limit" {
		t.Fatalf("limit 101 accepted")
	}
}

func FuzzBindBody(f *testing.F) {
	f.Add(`{"content":"hi","audience":"everyone"}`)
	f.Add(`{"content":5}`)
	f.Add(`{"node":"page/1/posts","content":"\u0000"}`)
	f.Add(`{"page_id":{"a":[1,2]}}`)
	f.Fuzz(func(t *testing.T, body string) {
		var m map[string]json.RawMessage
		if json.Unmarshal([]byte(body), &m) != nil {
			return
		}
		err := bindBody(dynamicpb.NewMessage(createPost), m, pageVars(t, "1"))
		if err == nil {
			return
		}
		if e, ok := apierr.As(err); !ok || e.HTTPStatus != 400 || e.Code != 100 {
			t.Fatalf("%s: %v is not an invalid-parameter refusal", body, err)
		}
	})
}

func FuzzBindQuery(f *testing.F) {
	f.Add("limit=10&after=abc")
	f.Add("limit=-1")
	f.Add("before=%ff&limit=99999999999")
	f.Fuzz(func(t *testing.T, q string) {
		v, err := url.ParseQuery(q)
		if err != nil {
			return
		}
		msg := dynamicpb.NewMessage(listPosts)
		if err := bindQuery(msg, v, pageVars(t, "1")); err != nil {
			if e, ok := apierr.As(err); !ok || e.Code != 100 {
				t.Fatalf("%s: %v", q, err)
			}
			return
		}
		if err := applyLimit(msg); err == nil {
			if n := msg.Get(listPosts.Fields().ByName("limit")).Int(); n < 1 || n > MaxLimit {
				t.Fatalf("%s: limit %d accepted", q, n)
			}
		}
	})
}

func TestARecycledRequestCarriesNothingOfThePreviousCall(t *testing.T) {
	t.Parallel()
	p := &requestPool{typ: dynamicpb.NewMessageType(listPosts)}
	msg := p.get()
	if err := bindQuery(msg, url.Values{"after": {"abc"}, "limit": {"5"}}, manifestcheck.NodeVars{}); err != nil {
		t.Fatal(err)
	}
	if err := bindPath(msg, pageVars(t, "7")); err != nil {
		t.Fatal(err)
	}
	msg.SetUnknown([]byte{0x98, 0x06, 0x01}) // field 99, varint 1
	p.put(msg)
	again := p.get()
	if err := bindQuery(again, url.Values{"before": {"xyz"}}, manifestcheck.NodeVars{}); err != nil {
		t.Fatal(err)
	}
	want := dynamicpb.NewMessage(listPosts)
	want.Set(listPosts.Fields().ByName("before"), protoreflect.ValueOfString("xyz"))
	if !proto.Equal(again.Interface(), want) {
		t.Fatalf("the second call's request is %v, want %v", again, want)
	}
}
