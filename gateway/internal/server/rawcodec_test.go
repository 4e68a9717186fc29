package server

import (
	"testing"

	"google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/protobuf/proto"
)

// A gRPC refusal's google.rpc.Status goes through the codec too: it must
// encode, or every gRPC refusal of a routed method reaches the client as
// "internal".
func TestRawCodecEncodesAGRPCRefusalsStatus(t *testing.T) {
	t.Parallel()
	st := &status.Status{Code: 3, Message: "Invalid parameter"}
	b, err := rawCodec{}.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	var back status.Status
	if err := proto.Unmarshal(b, &back); err != nil || !proto.Equal(&back, st) {
		t.Fatalf("round trip = %v, %v", &back, err)
	}
}
