package protocol

import (
	"errors"
	"math/rand/v2"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	errorsv1 "github.com/svcplatform/svc/gen/svc/errors/v1"
	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
)

// sameAsUnmarshal checks that decodeAnswer reads body as proto.Unmarshal
// does: the same message (but for the answer's unknown fields, which it
// drops) or a refusal of the same bytes.
func sameAsUnmarshal(t *testing.T, body []byte) {
	t.Helper()
	want := new(pluginv1.InvokeResponse)
	wantErr := proto.Unmarshal(body, want)
	want.ProtoReflect().SetUnknown(nil) // decodeAnswer drops the answer's own unknown fields
	got, err := decodeAnswer(body)
	switch {
	case (err == nil) != (wantErr == nil):
		t.Fatalf("decodeAnswer(%x) = %v, %v; proto.Unmarshal: %v", body, got, err, wantErr)
	case err == nil && !proto.Equal(got, want):
		t.Fatalf("decodeAnswer(%x) = %v, proto.Unmarshal: %v", body, got, want)
	}
}

func TestAnAnswerDecodesAsProtoUnmarshalDecodesIt(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(15, 26))
	for range 2000 {
		resp := &pluginv1.InvokeResponse{CallId: r.Uint64() >> uint(r.IntN(64))}
		switch r.IntN(3) {
		case 0:
			resp.Response = make([]byte, r.IntN(300))
			for i := range resp.Response {
				resp.Response[i] = byte(r.IntN(256))
			}
		case 1:
			resp.Error = &pluginv1.Error{ConnectCode: r.Uint32N(17), Message: "refused ☕",
				Graph: &errorsv1.GraphError{HttpStatus: 400, Code: r.Int32N(3000), Type: "OAuthException"}}
		}
		body, err := proto.Marshal(resp)
		if err != nil {
			t.Fatal(err)
		}
		// Fields written twice (the last bytes win, messages merge), an
		// unknown field, and a known field of another wire type.
		switch r.IntN(4) {
		case 0:
			body = append(body, body...)
		case 1:
			body = protowire.AppendTag(body, 99, protowire.BytesType)
			body = protowire.AppendBytes(body, []byte("later"))
		case 2:
			body = protowire.AppendTag(body, 1, protowire.VarintType)
			body = protowire.AppendVarint(body, 7)
		}
		sameAsUnmarshal(t, body)
		if got, _ := decodeAnswer(body); len(got.GetResponse()) > 0 && cap(got.GetResponse()) != len(got.GetResponse()) {
			t.Fatal("the response's bytes can be appended to over the rest of the frame")
		}
	}
}

func FuzzDecodeAnswer(f *testing.F) {
	ok, _ := proto.Marshal(&pluginv1.InvokeResponse{Response: []byte("answer"), CallId: 7})
	refused, _ := proto.Marshal(&pluginv1.InvokeResponse{Error: &pluginv1.Error{ConnectCode: 3, Message: "bad"}, CallId: 8})
	f.Add(ok)
	f.Add(refused)
	f.Add([]byte{0x0a, 0xff})
	f.Fuzz(sameAsUnmarshal)
}

func TestTheHandshakeLineNamesTheLaneAndRefusesOtherVersions(t *testing.T) {
	if got, err := ParseHandshake(HandshakeLine("/tmp/x/lane.sock") + "\n"); err != nil || got != "/tmp/x/lane.sock" {
		t.Fatalf("own handshake = %q, %v", got, err)
	}
	var v *VersionError
	if _, err := ParseHandshake("1|1|unix|/tmp/plugin123|grpc|"); !errors.As(err, &v) || !v.GoPlugin || v.Version != "1" {
		t.Errorf("go-plugin's handshake = %v, want a version-1 go-plugin VersionError", err)
	}
	if _, err := ParseHandshake("svc-plugin|3|/tmp/x/lane.sock"); !errors.As(err, &v) || v.GoPlugin || v.Version != "3" {
		t.Errorf("a version-3 handshake = %v, want a version-3 VersionError", err)
	}
	for _, line := range []string{"hello from main()", "", "svc-plugin|2|"} {
		if _, err := ParseHandshake(line); !errors.Is(err, ErrNotHandshake) {
			t.Errorf("ParseHandshake(%q) = %v, want ErrNotHandshake", line, err)
		}
	}
}
