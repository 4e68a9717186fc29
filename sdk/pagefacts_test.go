package sdk_test

import (
	"context"
	"testing"

	"google.golang.org/protobuf/proto"

	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
	testpluginv1 "github.com/svcplatform/svc/gen/svc/testplugin/v1"
	"github.com/svcplatform/svc/internal/plugin/wire"
	"github.com/svcplatform/svc/internal/testplugin/testsvc"
)

func TestACallsPageFactsAnswerOnlyForThePageTheyAreOf(t *testing.T) {
	t.Parallel()
	p := testsvc.New(testsvc.Config{Version: "1"})
	if _, err := wire.Manifest(p); err != nil {
		t.Fatal(err)
	}
	facts := &pluginv1.PageAccessResponse{PageId: "7", PageExists: true, PageName: "Demo Coffee", ChatSurfacing: true}
	for _, tc := range []struct {
		name  string
		facts *pluginv1.PageAccessResponse
		asked string
		want  *testpluginv1.PageFactsResponse
	}{
		{"the call's Page", facts, "7", &testpluginv1.PageFactsResponse{Sent: true, Exists: true, PageName: "Demo Coffee", ChatSurfacing: true}},
		{"another Page", facts, "8", &testpluginv1.PageFactsResponse{}},
		{"no facts sent", nil, "7", &testpluginv1.PageFactsResponse{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in, _ := proto.Marshal(&testpluginv1.PageFactsRequest{PageId: tc.asked})
			resp := wire.Invoke(context.Background(), p, &pluginv1.InvokeRequest{Procedure: "/svc.testplugin.v1.TestService/PageFacts",
				Request: in, PageAccess: tc.facts})
			if resp.GetError() != nil {
				t.Fatal(resp.GetError())
			}
			var got testpluginv1.PageFactsResponse
			if err := proto.Unmarshal(resp.GetResponse(), &got); err != nil {
				t.Fatal(err)
			}
			if !proto.Equal(&got, tc.want) {
				t.Errorf("handler saw %v, want %v", &got, tc.want)
			}
		})
	}
}
