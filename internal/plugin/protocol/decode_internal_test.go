package protocol

import (
	"math/rand/v2"
	"testing"
	"unsafe"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
)

// fill sets every field of m (and of its messages) to a random value,
// the Page facts' refusal only when refusal is true.
func fill(r *rand.Rand, m protoreflect.Message, refusal bool) {
	fds := m.Descriptor().Fields()
	for i := range fds.Len() {
		fd := fds.Get(i)
		if fd.Message() != nil && fd.Message().FullName() == "svc.plugin.v1.Error" && !refusal {
			continue
		}
		if fd.IsList() {
			l := m.Mutable(fd).List()
			for range 1 + r.IntN(4) {
				l.Append(value(r, fd))
			}
			continue
		}
		if fd.Message() != nil {
			fill(r, m.Mutable(fd).Message(), refusal)
			continue
		}
		m.Set(fd, value(r, fd))
	}
}

// value is a random value of fd's kind (not a message).
func value(r *rand.Rand, fd protoreflect.FieldDescriptor) protoreflect.Value {
	words := []string{"", "pages:read", "/svc.book.v1.BookService/ListPosts", "100000000000003", "Café ☕", "x"}
	switch fd.Kind() {
	case protoreflect.StringKind:
		return protoreflect.ValueOfString(words[r.IntN(len(words))])
	case protoreflect.BytesKind:
		b := make([]byte, r.IntN(40))
		for i := range b {
			b[i] = byte(r.IntN(256))
		}
		return protoreflect.ValueOfBytes(b)
	case protoreflect.BoolKind:
		return protoreflect.ValueOfBool(r.IntN(2) == 1)
	case protoreflect.EnumKind:
		return protoreflect.ValueOfEnum(protoreflect.EnumNumber(r.Int32N(6) - 1))
	case protoreflect.Int32Kind:
		return protoreflect.ValueOfInt32(r.Int32() - r.Int32())
	case protoreflect.Int64Kind:
		return protoreflect.ValueOfInt64(r.Int64() - r.Int64())
	case protoreflect.Uint32Kind:
		return protoreflect.ValueOfUint32(r.Uint32())
	case protoreflect.Uint64Kind:
		return protoreflect.ValueOfUint64(r.Uint64() >> uint(r.IntN(64)))
	}
	panic("fill: no value for " + fd.Kind().String())
}

// decodedAsUnmarshal checks that d decodes body as proto.Unmarshal does,
// itself or through the fallback, and reports whether d decoded it.
func decodedAsUnmarshal(t *testing.T, d *requestDecoder, body []byte) bool {
	t.Helper()
	want := new(pluginv1.InvokeRequest)
	wantErr := proto.Unmarshal(body, want)
	got := new(pluginv1.InvokeRequest)
	fast := d.decode(body, got)
	if fast && wantErr != nil {
		t.Fatalf("decode(%x) took what proto.Unmarshal refuses: %v", body, wantErr)
	}
	if fast && !proto.Equal(got, want) {
		t.Fatalf("decode(%x) = %v, proto.Unmarshal: %v", body, got, want)
	}
	return fast
}

func TestACallDecodesAsProtoUnmarshalDecodesIt(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(34, 1))
	var d requestDecoder
	for i := range 3000 {
		req := new(pluginv1.InvokeRequest)
		refusal := i%10 == 9
		fill(r, req.ProtoReflect(), refusal)
		body, err := proto.Marshal(req)
		if err != nil {
			t.Fatal(err)
		}
		body = protowire.AppendTag(body, callIDField, protowire.VarintType) // as appendFrame adds it
		body = protowire.AppendVarint(body, uint64(i))
		fast := decodedAsUnmarshal(t, &d, body)
		// Every field the gateway sends but a refusal is decoded without
		// the fallback: a field added to the messages fails here until
		// decode knows it.
		if fast == refusal {
			t.Fatalf("call %d (refusal: %v): decoded without the fallback: %v", i, refusal, fast)
		}
		// What decode leaves to proto.Unmarshal: messages sent twice,
		// unknown fields, known fields of another wire type, invalid UTF-8.
		var odd []byte
		switch r.IntN(4) {
		case 0:
			odd = append(body[:len(body):len(body)], body...)
		case 1:
			odd = protowire.AppendTag(body[:len(body):len(body)], 99, protowire.BytesType)
			odd = protowire.AppendBytes(odd, []byte("later"))
		case 2:
			odd = protowire.AppendTag(body[:len(body):len(body)], 1, protowire.VarintType)
			odd = protowire.AppendVarint(odd, 7)
		case 3:
			odd = protowire.AppendTag(body[:len(body):len(body)], 4, protowire.BytesType)
			odd = protowire.AppendBytes(odd, []byte{0xff, 'a'})
		}
		decodedAsUnmarshal(t, &d, odd)
	}
}

func TestACallRepeatingTheLastOnesStringsSharesThem(t *testing.T) {
	req := &pluginv1.InvokeRequest{
		Procedure: "/svc.book.v1.BookService/ListPosts", Request: []byte{8, 1}, TraceId: "trace",
		Principal:  &pluginv1.Principal{TokenKind: 1, UserId: "100000000000001", AppId: "200000000000001", Scopes: []string{"pages:read", "pages:manage"}},
		PageAccess: &pluginv1.PageAccessResponse{PageExists: true, UserRole: 3, AppProducts: []string{"book", "chat"}, PageName: "Café", PageId: "100000000000003"},
	}
	body, _ := proto.Marshal(req)
	var d requestDecoder
	first, second := new(pluginv1.InvokeRequest), new(pluginv1.InvokeRequest)
	if !d.decode(body, first) || !d.decode(body, second) {
		t.Fatal("not decoded")
	}
	for i, pair := range [][2]string{
		{first.Procedure, second.Procedure}, {first.Principal.UserId, second.Principal.UserId},
		{first.Principal.Scopes[1], second.Principal.Scopes[1]}, {first.PageAccess.AppProducts[0], second.PageAccess.AppProducts[0]},
		{first.PageAccess.PageId, second.PageAccess.PageId},
	} {
		if unsafe.StringData(pair[0]) != unsafe.StringData(pair[1]) {
			t.Errorf("string %d (%q) was allocated again", i, pair[0])
		}
	}
	if first.Principal == second.Principal || &first.Principal.Scopes[0] == &second.Principal.Scopes[0] {
		t.Error("two calls share a message or a slice, which a handler may keep")
	}
	// The trace id, the message and two slices for the principal, two for the
	// Page's facts and the request's bytes.
	into := new(pluginv1.InvokeRequest)
	if n := testing.AllocsPerRun(100, func() { d.decode(body, into) }); n > 6 {
		t.Errorf("%v allocations per call, want at most 6", n)
	}
}

func FuzzDecodeRequest(f *testing.F) {
	body, _ := proto.Marshal(&pluginv1.InvokeRequest{Procedure: "/p", Principal: &pluginv1.Principal{Scopes: []string{"a"}}, CallId: 3})
	f.Add(body)
	f.Add([]byte{0x0a, 0xff})
	var d requestDecoder
	f.Fuzz(func(t *testing.T, body []byte) { decodedAsUnmarshal(t, &d, body) })
}

// benchCall is a Graph read's call as the gateway sends it.
func benchCall(b *testing.B) []byte {
	req := &pluginv1.InvokeRequest{
		Procedure: "/svc.book.v1.BookService/ListPosts", Request: []byte{0x0a, 0x0f, '1', '0', '0', '0', '0', '0', '0', '0', '0', '0', '0', '0', '0', '0', '3', 0x10, 0x0a},
		TraceId: "4bf92f3577b34da6a3ce929d0e0e4736", DeadlineUnixNano: 1_800_000_000_000_000_000, Delegation: "d1234567890",
		Principal:  &pluginv1.Principal{TokenKind: 1, UserId: "100000000000001", AppId: "200000000000001", Scopes: []string{"pages:read", "pages:manage"}, Live: true},
		PageAccess: &pluginv1.PageAccessResponse{PageExists: true, UserRole: 3, AppLinked: true, AppProducts: []string{"book", "chat", "commerce"}, Published: true, PageName: "Bench Page", PageId: "100000000000003"},
	}
	body, err := appendFrame(nil, req, 42)
	if err != nil {
		b.Fatal(err)
	}
	return body[4:]
}

func BenchmarkDecodeRequest(b *testing.B) {
	body := benchCall(b)
	b.Run("unmarshal", func(b *testing.B) {
		req := new(pluginv1.InvokeRequest)
		b.ReportAllocs()
		for b.Loop() {
			if err := proto.Unmarshal(body, req); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("decode", func(b *testing.B) {
		req := new(pluginv1.InvokeRequest)
		var d requestDecoder
		b.ReportAllocs()
		for b.Loop() {
			if !d.decode(body, req) {
				b.Fatal("fallback")
			}
		}
	})
}
