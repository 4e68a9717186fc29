package sdk_test

import (
	"context"
	"testing"

	"google.golang.org/protobuf/proto"

	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
	testpluginv1 "github.com/svcplatform/svc/gen/svc/testplugin/v1"
	"github.com/svcplatform/svc/internal/plugin/wire"
	"github.com/svcplatform/svc/sdk"
)

// TestAfterAnswerRunsOnceTheAnswerIsEncodedAndWhenTheCallFails: a handler
// that reuses its answer's memory takes it back in f, so f must run after
// the answer is encoded (what f changes is not in the answer), once, and
// also when the handler fails.
func TestAfterAnswerRunsOnceTheAnswerIsEncodedAndWhenTheCallFails(t *testing.T) {
	t.Parallel()
	echo := testpluginv1.File_svc_testplugin_v1_testplugin_proto.Services().ByName("TestService").Methods().ByName("Echo")
	p := sdk.New(sdk.Info{Name: "afteranswer", Version: "1"})
	runs := 0
	sdk.Handle(p, echo, func(_ context.Context, call *sdk.Call, req *testpluginv1.EchoRequest) (*testpluginv1.EchoResponse, error) {
		res := &testpluginv1.EchoResponse{Id: req.GetId(), Text: req.GetText()}
		call.AfterAnswer(func() {
			runs++
			res.Text = "reused" // after encoding: not in the answer
		})
		if req.GetText() == "fail" {
			return nil, sdk.Invalid("text", "The text says fail.")
		}
		return res, nil
	})
	call := func(text string) *pluginv1.InvokeResponse {
		in, _ := proto.Marshal(&testpluginv1.EchoRequest{Id: "1", Text: text})
		return wire.Invoke(context.Background(), p, &pluginv1.InvokeRequest{Procedure: "/" + string(echo.Parent().FullName()) + "/" + string(echo.Name()), Request: in})
	}

	resp := call("hello")
	var res testpluginv1.EchoResponse
	if err := proto.Unmarshal(resp.GetResponse(), &res); err != nil || resp.GetError() != nil {
		t.Fatalf("answer: %v %v", err, resp.GetError())
	}
	if res.GetText() != "hello" || runs != 1 {
		t.Fatalf("answer text %q after %d runs of f; want hello after one", res.GetText(), runs)
	}
	if resp := call("fail"); resp.GetError() == nil || runs != 2 {
		t.Fatalf("failed call: error %v, %d runs of f; want an error and a second run", resp.GetError(), runs)
	}
}
