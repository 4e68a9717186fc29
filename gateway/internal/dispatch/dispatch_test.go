package dispatch_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/proto"

	"github.com/svcplatform/svc/gateway/internal/apierr"
	"github.com/svcplatform/svc/gateway/internal/auth"
	"github.com/svcplatform/svc/gateway/internal/dispatch"
	"github.com/svcplatform/svc/gateway/internal/host"
	"github.com/svcplatform/svc/gateway/internal/identity"
	"github.com/svcplatform/svc/gateway/internal/identity/identitytest"
	"github.com/svcplatform/svc/gateway/internal/observe"
	"github.com/svcplatform/svc/gateway/internal/route"
	"github.com/svcplatform/svc/gateway/internal/server"
	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
	testpluginv1 "github.com/svcplatform/svc/gen/svc/testplugin/v1"
	"github.com/svcplatform/svc/gen/svc/testplugin/v1/testpluginv1connect"
	"github.com/svcplatform/svc/internal/plugin/manifestcheck"
	"github.com/svcplatform/svc/internal/plugin/wire"
	"github.com/svcplatform/svc/internal/testplugin/testsvc"
	"github.com/svcplatform/svc/sdk"
)

func TestMain(m *testing.M) { identitytest.Main(m) }

const (
	echoProcedure = "/svc.testplugin.v1.TestService/Echo"
	slowProcedure = "/svc.testplugin.v1.TestService/Slow"
	failProcedure = "/svc.testplugin.v1.TestService/Fail"
)

// rig is a Dispatcher serving the test plugin's TestService in-process as
// the gateway's own services are served, over real HTTP, with a real
// authenticator on a fresh database. handled counts the calls that reached
// a handler.
type rig struct {
	w       *identitytest.World
	d       *dispatch.Dispatcher
	metrics *observe.Metrics
	client  testpluginv1connect.TestServiceClient
	handled atomic.Int32
	authn   *auth.Authenticator
	url     string
	// follower follows the route table as the server does.
	follower *follower
}

// follower is a dispatch.Follower that records the table it serves and
// refuses new ones while refuse is set.
type follower struct {
	serving atomic.Pointer[route.Table]
	refuse  atomic.Bool
}

func (f *follower) Prepare(t *route.Table) (func(), error) {
	if f.refuse.Load() {
		return nil, errors.New("refused")
	}
	return func() { f.serving.Store(t) }, nil
}

func newRig(t *testing.T) *rig {
	t.Helper()
	r := &rig{w: identitytest.NewWorld(t), metrics: observe.NewMetrics()}
	authn := auth.New(r.w.IDs, auth.Options{})
	core := sdk.New(sdk.Info{Name: "core", Version: "test"})
	methods := testpluginv1.File_svc_testplugin_v1_testplugin_proto.Services().ByName("TestService").Methods()
	sdk.Handle(core, methods.ByName("Echo"), func(_ context.Context, call *sdk.Call, req *testpluginv1.EchoRequest) (*testpluginv1.EchoResponse, error) {
		r.handled.Add(1)
		return &testpluginv1.EchoResponse{Id: req.GetId(), UserId: call.Principal().UserID}, nil
	})
	sdk.Handle(core, methods.ByName("Slow"), func(context.Context, *sdk.Call, *testpluginv1.SlowRequest) (*testpluginv1.SlowResponse, error) {
		r.handled.Add(1)
		return &testpluginv1.SlowResponse{}, nil
	})
	sdk.Handle(core, methods.ByName("Fail"), func(_ context.Context, _ *sdk.Call, req *testpluginv1.FailRequest) (*testpluginv1.FailResponse, error) {
		r.handled.Add(1)
		return nil, sdk.Errorf(int(req.GetHttpStatus()), int(req.GetCode()), int(req.GetErrorSubcode()), "%s", req.GetMessage())
	})
	sdk.Handle(core, methods.ByName("PageFacts"), testsvc.PageFacts)
	r.authn = authn
	d, err := dispatch.New(dispatch.Options{Auth: authn, Core: core, Calls: observe.NewCalls(r.metrics)})
	if err != nil {
		t.Fatal(err)
	}
	srv := server.New(server.Options{Metrics: r.metrics, Authenticate: dispatch.Authenticate(authn), Calls: d})
	r.follower = &follower{}
	d.Follow(srv, r.follower)
	if err := d.Rebuild(nil); err != nil {
		t.Fatal(err)
	}
	r.d = d
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	r.url = hs.URL
	r.client = testpluginv1connect.NewTestServiceClient(hs.Client(), hs.URL)
	return r
}

// bearer is a request carrying token as its bearer credential.
func bearer[T any](msg *T, token string) *connect.Request[T] {
	req := connect.NewRequest(msg)
	if token != "" {
		req.Header().Set("Authorization", "Bearer "+token)
	}
	return req
}

// wantRefused checks that err is the platform's refusal with these numbers
// and that no handler ran.
func (r *rig) wantRefused(t *testing.T, err error, status, code int) *apierr.Error {
	t.Helper()
	var ce *connect.Error
	if !errors.As(err, &ce) {
		t.Fatalf("err = %v, want a refusal %d/%d", err, status, code)
	}
	e := apierr.FromConnect(ce)
	if e.HTTPStatus != status || e.Code != code {
		t.Fatalf("refusal = HTTP %d code %d/%d (%s), want HTTP %d code %d", e.HTTPStatus, e.Code, e.Subcode, e.Message, status, code)
	}
	if n := r.handled.Load(); n != 0 {
		t.Fatalf("a refused call reached a handler (%d calls)", n)
	}
	return e
}

// session opens a session for the World's owner: a credential the
// authenticator resolves to a user.
func (r *rig) session(t *testing.T) string {
	t.Helper()
	s, err := r.w.IDs.Sessions.CreateSession(context.Background(), r.w.Owner.ID)
	if err != nil {
		t.Fatal(err)
	}
	return s.Token
}

func TestAnAuthenticatedCallReachesItsHandlerWithTheCallersPrincipal(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	res, err := r.client.Echo(context.Background(), bearer(&testpluginv1.EchoRequest{Id: "1"}, r.session(t)))
	if err != nil {
		t.Fatal(err)
	}
	if res.Msg.GetId() != "1" || res.Msg.GetUserId() != r.w.Owner.ID {
		t.Fatalf("answer = %v, want id 1 for user %s", res.Msg, r.w.Owner.ID)
	}
}

func TestAuthenticateACredentialThatNamesNothingIsRefusedWith190BeforeTheHandler(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	_, err := r.client.Slow(context.Background(), bearer(&testpluginv1.SlowRequest{}, "svc_nothing-at-all"))
	r.wantRefused(t, err, http.StatusUnauthorized, 190)
}

func TestAuthenticateAPublicMethodIgnoresABadCredential(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	res, err := r.client.Echo(context.Background(), bearer(&testpluginv1.EchoRequest{Id: "1"}, "svc_nothing-at-all"))
	if err != nil {
		t.Fatal(err)
	}
	if res.Msg.GetUserId() != "" {
		t.Fatalf("a bad credential became user %q", res.Msg.GetUserId())
	}
}

func TestRouteAHostCallOfAProcedureNoPluginServesIsRefusedWith2500(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	res, err := r.d.HostServer(r.w.IDs).Call(context.Background(), &pluginv1.InvokeRequest{Procedure: "/svc.nothing.v1.Nothing/Call"})
	if err != nil {
		t.Fatal(err)
	}
	e := wire.ErrorFromProto(res.GetError())
	if e == nil || e.HTTPStatus != http.StatusNotFound || e.Code != 2500 {
		t.Fatalf("answer = %v, want 404 code 2500", res)
	}
}

func TestValidateARequestBreakingItsProtoRulesIsRefusedWith100BeforeTheHandler(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	_, err := r.client.Echo(context.Background(), bearer(&testpluginv1.EchoRequest{Id: ""}, ""))
	r.wantRefused(t, err, http.StatusBadRequest, 100)
}

func TestAuthorizeACallWithoutACredentialIsRefusedWith104BeforeTheHandler(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	_, err := r.client.Slow(context.Background(), bearer(&testpluginv1.SlowRequest{}, ""))
	r.wantRefused(t, err, http.StatusUnauthorized, 104)
}

// CONTRACT §15: the credential is looked at before the body, which the
// Connect handler has not read yet when it is refused.
func TestAuthenticationComesFirstABodyThatDoesNotDecodeIsRefusedWith401WithoutACredential(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	post := func(token string) (int, string) {
		req, err := http.NewRequest(http.MethodPost, r.url+slowProcedure, strings.NewReader(`{"sleepMs":"not a number"}`))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Connect-Protocol-Version", "1")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	for _, c := range []struct {
		name, token string
		status      int
		code        string
	}{
		{"no token", "", http.StatusUnauthorized, `"code":"unauthenticated"`},
		{"a token that names nothing", "svc_nothing-at-all", http.StatusUnauthorized, `"code":"unauthenticated"`},
		{"a session: the body's own refusal", r.session(t), http.StatusBadRequest, `"code":"invalid_argument"`},
	} {
		status, body := post(c.token)
		if status != c.status || !strings.Contains(body, c.code) {
			t.Errorf("%s: %d %s, want %d with %s", c.name, status, body, c.status, c.code)
		}
	}
	if n := r.handled.Load(); n != 0 {
		t.Fatalf("a refused call reached a handler (%d calls)", n)
	}
}

func TestAuthorizeAnAppKeyOnAMethodForUserTokensIsRefusedWith403BeforeTheHandler(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	key, err := r.w.IDs.Apps.CreateAppKey(context.Background(), r.w.App.ID)
	if err != nil {
		t.Fatal(err)
	}
	_, err = r.client.Slow(context.Background(), bearer(&testpluginv1.SlowRequest{}, key))
	r.wantRefused(t, err, http.StatusForbidden, 200)
}

func TestAuthorizeAHostCallIsCheckedLikeAnOutsideCall(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	raw, err := proto.Marshal(&testpluginv1.SlowRequest{})
	if err != nil {
		t.Fatal(err)
	}
	// No principal: the host resolved none for this plugin.
	res, err := r.d.HostServer(r.w.IDs).Call(context.Background(), &pluginv1.InvokeRequest{Procedure: slowProcedure, Request: raw})
	if err != nil {
		t.Fatal(err)
	}
	if e := wire.ErrorFromProto(res.GetError()); e == nil || e.HTTPStatus != http.StatusUnauthorized {
		t.Fatalf("answer = %v, want a 401 refusal", res)
	}
	if n := r.handled.Load(); n != 0 {
		t.Fatal("a Host call skipped the access check")
	}
}

func TestInvokeThePluginsRefusalReachesTheCallerWithItsNumbersAndIsCountedAsRefused(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	_, err := r.client.Fail(context.Background(), bearer(&testpluginv1.FailRequest{HttpStatus: 409, Code: 100, ErrorSubcode: 2018001, Message: "Taken."}, r.session(t)))
	var ce *connect.Error
	if !errors.As(err, &ce) {
		t.Fatalf("err = %v", err)
	}
	if e := apierr.FromConnect(ce); e.HTTPStatus != 409 || e.Code != 100 || e.Subcode != 2018001 || e.Message != "Taken." {
		t.Fatalf("refusal = %+v", e)
	}
	if n := r.handled.Load(); n != 1 {
		t.Fatalf("%d handler calls, want 1", n)
	}
	if n := r.calls(t, "core", failProcedure, observe.CallRefused); n != 1 {
		t.Fatalf("%d calls counted as refused, want 1", n)
	}
}

// calls is how many calls the metrics counted with these labels.
func (r *rig) calls(t *testing.T, plugin, procedure, outcome string) uint64 {
	t.Helper()
	families, err := r.metrics.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != "svc_plugin_call_duration_seconds" {
			continue
		}
	metrics:
		for _, m := range f.GetMetric() {
			want := map[string]string{"plugin": plugin, "procedure": procedure, "outcome": outcome}
			for _, l := range m.GetLabel() {
				if want[l.GetName()] != l.GetValue() {
					continue metrics
				}
			}
			return m.GetHistogram().GetSampleCount()
		}
	}
	return 0
}

func TestRebuildATableWhereTwoPluginsClaimOneNodeIsRefusedAndTheOldTableServes(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	before := r.d.Table()
	if r.follower.serving.Load() != before {
		t.Fatal("the follower was not switched with the table")
	}
	// A plugin whose AliasService claims echo/{id}, which core serves.
	alias := sdk.New(sdk.Info{Name: "alias", Version: "1"})
	sdk.Handle(alias, testpluginv1.File_svc_testplugin_v1_testplugin_proto.Services().ByName("AliasService").Methods().ByName("Echo"), func(context.Context, *sdk.Call, *testpluginv1.EchoRequest) (*testpluginv1.EchoResponse, error) {
		return &testpluginv1.EchoResponse{}, nil
	})
	m, err := wire.Manifest(alias)
	if err != nil {
		t.Fatal(err)
	}
	p, err := manifestcheck.Check(m)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.d.Rebuild([]*host.Loaded{{Name: "alias", Plugin: p}}); err == nil {
		t.Fatal("a table with echo/{id} claimed twice was built")
	}
	if r.d.Table() != before {
		t.Fatal("the refused table replaced the one in use")
	}
	if r.follower.serving.Load() != before {
		t.Fatal("the follower serves another table than the one in use")
	}
	if _, ok := r.d.Table().Method("/svc.testplugin.v1.AliasService/Echo"); ok {
		t.Fatal("the refused plugin's method is routed")
	}
	if _, err := r.client.Echo(context.Background(), bearer(&testpluginv1.EchoRequest{Id: "1"}, "")); err != nil {
		t.Fatalf("the table in use stopped serving: %v", err)
	}
}

func TestRebuildATableAFollowerCannotServeIsRefusedAndTheOldTableServes(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	before := r.d.Table()
	r.follower.refuse.Store(true)
	if err := r.d.Rebuild(nil); err == nil {
		t.Fatal("a table a follower refused was published")
	}
	if r.d.Table() != before || r.follower.serving.Load() != before {
		t.Fatal("the refused table replaced the one in use")
	}
	if _, err := r.client.Echo(context.Background(), bearer(&testpluginv1.EchoRequest{Id: "1"}, "")); err != nil {
		t.Fatalf("the table in use stopped serving: %v", err)
	}
}

func TestInvokeACallOnAPageCarriesTheFactsItsAuthorizationReadFreshAfterAChangeThroughThisGateway(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	ctx, token := context.Background(), r.session(t)
	facts := func() *testpluginv1.PageFactsResponse {
		t.Helper()
		res, err := r.client.PageFacts(ctx, bearer(&testpluginv1.PageFactsRequest{PageId: r.w.Page.ID}, token))
		if err != nil {
			t.Fatal(err)
		}
		return res.Msg
	}
	got := facts()
	if !got.GetSent() || !got.GetExists() || got.GetPageName() != r.w.Page.Name || !got.GetChatSurfacing() {
		t.Fatalf("facts with the call = %v, want the Page's, showing its chats", got)
	}
	// A change made behind the gateway's back is seen within the cache's
	// bound; one made through it (which tells the authenticator) at once.
	if _, err := r.w.Pool.Exec(ctx, "UPDATE core.pages SET chat_surfacing = false WHERE id = $1", r.w.Page.ID); err != nil {
		t.Fatal(err)
	}
	r.authn.ForgetPage(r.w.Page.ID)
	if got := facts(); !got.GetSent() || got.GetChatSurfacing() {
		t.Fatalf("facts after the change = %v, want chat surfacing off", got)
	}
	// A method whose rule names no Page carries none.
	res, err := r.client.Echo(ctx, bearer(&testpluginv1.EchoRequest{Id: "1"}, token))
	if err != nil || res.Msg.GetId() != "1" {
		t.Fatalf("echo = %v, %v", res, err)
	}
}

// A plugin that names the least role its action needs gets the gateway's
// decision (the access rules' own, auth.AuthorizePage) and, when refused,
// the gateway's §3 refusal to return as is: the same 403, code 200, 2069003
// a method declaring that page_role answers.
func TestHostPageAccessWithANeedAnswersTheGatewaysRefusal(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	ctx, hs := context.Background(), r.d.HostServer(r.w.IDs)
	ask := func(user string, need pluginv1.PageRole) *pluginv1.PageAccessResponse {
		t.Helper()
		res, err := hs.PageAccess(ctx, &pluginv1.PageAccessRequest{PageId: r.w.Page.ID, UserId: user, Need: need})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	t.Run("an editor meets EDITOR and gets the Page's facts", func(t *testing.T) {
		res := ask(r.w.PageEditor.ID, pluginv1.PageRole_PAGE_ROLE_EDITOR)
		if res.GetRefusal() != nil || !res.GetPageExists() || res.GetPageName() != r.w.Page.Name {
			t.Fatalf("answer = %v, want the facts", res)
		}
	})
	for _, tc := range []struct {
		rule string
		user string
		need pluginv1.PageRole
	}{
		{"an admin does not meet OWNER", r.w.PageAdmin.ID, pluginv1.PageRole_PAGE_ROLE_OWNER},
		{"an editor does not meet ADMIN", r.w.PageEditor.ID, pluginv1.PageRole_PAGE_ROLE_ADMIN},
		{"someone without a role does not meet EDITOR", r.w.Stranger.ID, pluginv1.PageRole_PAGE_ROLE_EDITOR},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			res := ask(tc.user, tc.need)
			e := wire.ErrorFromProto(res.GetRefusal())
			if e == nil || e.HTTPStatus != http.StatusForbidden || e.Code != 200 || e.Subcode != 2069003 || e.Type != sdk.TypeOAuth || res.GetPageExists() {
				t.Fatalf("answer = %v, want only the refusal 403, code 200, 2069003", res)
			}
		})
	}
	t.Run("without a need the facts are answered, no decision", func(t *testing.T) {
		res := ask(r.w.Stranger.ID, pluginv1.PageRole_PAGE_ROLE_UNSPECIFIED)
		if res.GetRefusal() != nil || !res.GetPageExists() {
			t.Fatalf("answer = %v", res)
		}
	})
}

// A plugin keeping an object under a business (or a business's asset)
// asks for the least role its action needs and gets the decision of a
// declared business_role (auth.AuthorizeBusiness): an admin has any role,
// an employee EMPLOYEE only, anyone else none; an asset in no business and
// a business that does not exist are not found.
func TestHostBusinessAccessAnswersTheBusinessRoleRule(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	ctx, hs := context.Background(), r.d.HostServer(r.w.IDs)
	biz, err := r.w.IDs.Businesses.Create(ctx, r.w.Owner.ID, "Owner Co.")
	if err != nil {
		t.Fatal(err)
	}
	if err := r.w.IDs.Businesses.SetRole(ctx, biz.ID, r.w.PageAdmin.ID, identity.BusinessEmployee); err != nil {
		t.Fatal(err)
	}
	if err := r.w.IDs.Businesses.AddAsset(ctx, biz.ID, r.w.Owner.ID, "PAGE", r.w.Page.ID, false); err != nil {
		t.Fatal(err)
	}
	admin, employee := pluginv1.BusinessRole_BUSINESS_ROLE_ADMIN, pluginv1.BusinessRole_BUSINESS_ROLE_EMPLOYEE
	for _, tc := range []struct {
		rule   string
		req    *pluginv1.BusinessAccessRequest
		status int // 0: allowed
	}{
		{"an admin meets ADMIN", &pluginv1.BusinessAccessRequest{BusinessId: biz.ID, UserId: r.w.Owner.ID, Need: admin}, 0},
		{"an employee meets EMPLOYEE", &pluginv1.BusinessAccessRequest{BusinessId: biz.ID, UserId: r.w.PageAdmin.ID, Need: employee}, 0},
		{"an employee does not meet ADMIN", &pluginv1.BusinessAccessRequest{BusinessId: biz.ID, UserId: r.w.PageAdmin.ID, Need: admin}, 403},
		{"someone without a role does not meet EMPLOYEE", &pluginv1.BusinessAccessRequest{BusinessId: biz.ID, UserId: r.w.Stranger.ID, Need: employee}, 403},
		{"a business that does not exist is not found", &pluginv1.BusinessAccessRequest{BusinessId: "9999999999", UserId: r.w.Owner.ID, Need: employee}, 404},
		{"an asset's business is asked by the asset", &pluginv1.BusinessAccessRequest{AssetType: "PAGE", AssetId: r.w.Page.ID, UserId: r.w.Owner.ID, Need: admin}, 0},
		{"an employee of an asset's business does not meet ADMIN", &pluginv1.BusinessAccessRequest{AssetType: "PAGE", AssetId: r.w.Page.ID, UserId: r.w.PageAdmin.ID, Need: admin}, 403},
		{"an asset in no business is not found", &pluginv1.BusinessAccessRequest{AssetType: "PAGE", AssetId: r.w.OtherPage.ID, UserId: r.w.Owner.ID, Need: employee}, 404},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			res, err := hs.BusinessAccess(ctx, tc.req)
			if err != nil {
				t.Fatal(err)
			}
			if tc.status == 0 {
				if res.GetRefusal() != nil {
					t.Fatalf("refused: %v", res.GetRefusal())
				}
				return
			}
			e := wire.ErrorFromProto(res.GetRefusal())
			switch {
			case tc.status == 403 && (e == nil || e.HTTPStatus != 403 || e.Code != 200 || e.Subcode != 2069003):
				t.Fatalf("answer = %v, want 403, code 200, 2069003", e)
			case tc.status == 404 && (e == nil || e.HTTPStatus != 404):
				t.Fatalf("answer = %v, want 404", e)
			}
		})
	}
}
