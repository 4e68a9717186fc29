package plugintest_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	testpluginv1 "github.com/svcplatform/svc/gen/svc/testplugin/v1"
	"github.com/svcplatform/svc/sdk"
	"github.com/svcplatform/svc/sdk/plugintest"
)

// facts is a test host answering fixed facts.
type facts struct {
	plugintest.NoHost
	page sdk.PageAccess
	app  sdk.AppInfo
	user sdk.UserInfo
}

func (f facts) PageAccess(context.Context, sdk.PageQuery) (*sdk.PageAccess, error) {
	return &f.page, nil
}
func (f facts) AppInfo(context.Context, string) (*sdk.AppInfo, error)   { return &f.app, nil }
func (f facts) UserInfo(context.Context, string) (*sdk.UserInfo, error) { return &f.user, nil }

// askingPlugin's Echo answers what it was told by the host, formatted.
func askingPlugin(ask func(ctx context.Context, h *sdk.HostClient) (any, error)) *sdk.Plugin {
	p := sdk.New(sdk.Info{Name: "asker", Version: "1"})
	echo := testpluginv1.File_svc_testplugin_v1_testplugin_proto.Services().ByName("TestService").Methods().ByName("Echo")
	sdk.Handle(p, echo, func(ctx context.Context, call *sdk.Call, _ *testpluginv1.EchoRequest) (*testpluginv1.EchoResponse, error) {
		v, err := ask(ctx, call.Host())
		if err != nil {
			return nil, err
		}
		return &testpluginv1.EchoResponse{Text: fmt.Sprintf("%+v", v)}, nil
	})
	return p
}

func TestAFakeHostsFactsReachThePluginUnchanged(t *testing.T) {
	t.Parallel()
	f := facts{
		page: sdk.PageAccess{Exists: true, Name: "Demo Coffee", AppLinked: true,
			AppProducts: []string{"svcchat", "book"}, Published: true, ChatSurfacing: true, InboxAutomation: true,
			AssistantLabel: "Barista bot", InboxMergeLinked: true, HandoverTimeout: 90 * time.Second},
		app:  sdk.AppInfo{Exists: true, Name: "Shop", Live: true, Products: []string{"svcchat"}, PlatformConfig: map[string]any{"a": "b"}},
		user: sdk.UserInfo{Exists: true, Name: "Ada"},
	}
	for _, tc := range []struct {
		name string
		ask  func(ctx context.Context, h *sdk.HostClient) (any, error)
		want any
	}{
		{"PageAccess", func(ctx context.Context, h *sdk.HostClient) (any, error) {
			a, err := h.PageAccess(ctx, sdk.PageQuery{PageID: "1"})
			return deref(a), err
		}, f.page},
		{"AppInfo", func(ctx context.Context, h *sdk.HostClient) (any, error) {
			a, err := h.AppInfo(ctx, "2")
			return deref(a), err
		}, f.app},
		{"UserInfo", func(ctx context.Context, h *sdk.HostClient) (any, error) {
			u, err := h.UserInfo(ctx, "3")
			return deref(u), err
		}, f.user},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tp := plugintest.Start(t, askingPlugin(tc.ask), plugintest.WithHost(f))
			res, err := plugintest.CallT[*testpluginv1.EchoResponse](t, tp, "/svc.testplugin.v1.TestService/Echo", sdk.Principal{}, &testpluginv1.EchoRequest{})
			if err != nil {
				t.Fatal(err)
			}
			if want := fmt.Sprintf("%+v", tc.want); res.GetText() != want {
				t.Errorf("the plugin saw %s, want %s", res.GetText(), want)
			}
		})
	}
}

func TestWhatATestHostDoesNotImplementFailsTheAsk(t *testing.T) {
	t.Parallel()
	tp := plugintest.Start(t, askingPlugin(func(ctx context.Context, h *sdk.HostClient) (any, error) {
		return h.UserInfo(ctx, "3")
	}), plugintest.WithHost(plugintest.OnePage{PageID: "1"}))
	if _, err := plugintest.CallT[*testpluginv1.EchoResponse](t, tp, "/svc.testplugin.v1.TestService/Echo", sdk.Principal{}, &testpluginv1.EchoRequest{}); err == nil {
		t.Fatal("UserInfo of a host that only knows a Page answered")
	}
}

func TestATestHostsRefusalOfANeedReachesThePluginAsTheGateways(t *testing.T) {
	t.Parallel()
	host := plugintest.WithHost(plugintest.OnePage{PageID: "1", Admins: []string{"5"}})
	for _, tc := range []struct {
		rule  string
		q     sdk.PageQuery
		allow bool
	}{
		{"an admin meets EDITOR", sdk.PageQuery{PageID: "1", UserID: "5", Need: sdk.PageRoleEditor}, true},
		{"an admin does not meet OWNER", sdk.PageQuery{PageID: "1", UserID: "5", Need: sdk.PageRoleOwner}, false},
		{"someone without a role does not meet EDITOR", sdk.PageQuery{PageID: "1", UserID: "6", Need: sdk.PageRoleEditor}, false},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			var seen error
			tp := plugintest.Start(t, askingPlugin(func(ctx context.Context, h *sdk.HostClient) (any, error) {
				_, seen = h.PageAccess(ctx, tc.q)
				return nil, seen
			}), host)
			_, err := plugintest.CallT[*testpluginv1.EchoResponse](t, tp, "/svc.testplugin.v1.TestService/Echo", sdk.Principal{}, &testpluginv1.EchoRequest{})
			if tc.allow {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			plugintest.WantRefusal(t, err, 403, 200, 2069003)
			if !errors.Is(seen, sdk.ErrPageRefused) {
				t.Errorf("the plugin saw %v, want a refusal it can tell from a failure (sdk.ErrPageRefused)", seen)
			}
		})
	}
}

func deref[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}
