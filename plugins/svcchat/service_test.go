package main

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	svcchatv1 "github.com/svcplatform/svc/gen/svc/svcchat/v1"
	"github.com/svcplatform/svc/internal/readpool"
	svcchatsql "github.com/svcplatform/svc/plugins/svcchat/sql"
	"github.com/svcplatform/svc/sdk"
	"github.com/svcplatform/svc/sdk/plugintest"
)

func TestMain(m *testing.M) { plugintest.Main(m, "svcchat", svcchatsql.Migrations()) }

// gatewayFacts is the Host service of these tests: the core facts the
// gateway would answer (one published Page with chat surfacing, apps by
// id), which a test may change. The gateway's own implementation is
// covered by the e2e tests.
type gatewayFacts struct {
	plugintest.NoHost
	mu   sync.Mutex
	page sdk.PageAccess
	apps map[string]*sdk.AppInfo
	// roles are users' roles on the Page (none for anyone else), by the
	// constants' names: a query's Need is met as meets says.
	roles map[string]sdk.PageRole
	// complete answers the completions plugin's Complete; nil: no plugin
	// serves it.
	complete func(plugintest.HostCall) ([]byte, error)
	// completeCalls counts Complete calls; lastCall is the last one.
	completeCalls int
	lastCall      plugintest.HostCall
	// chat answers the chat plugin's methods (blocks of people, direct
	// messages for reports); nil: no plugin serves them.
	chat func(plugintest.HostCall) ([]byte, error)
}

func (g *gatewayFacts) Call(_ context.Context, c plugintest.HostCall) ([]byte, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if strings.HasPrefix(c.Procedure, "/svc.chat.v1.ChatService/") && g.chat != nil {
		return g.chat(c)
	}
	if c.Procedure != completeProcedure || g.complete == nil {
		return nil, sdk.Unavailable("The completions plugin")
	}
	g.completeCalls++
	g.lastCall = c
	return g.complete(c)
}

// meets is who meets each least role a query may need, as
// docs/design/auth.md's table says. It is this fake gateway's statement of
// the rule, so that these tests check which role svcchat asks for; the
// gateway's own rule is tested row by row in gateway/internal/auth.
var meets = map[sdk.PageRole][]sdk.PageRole{
	sdk.PageRoleLinked: {sdk.PageRoleOwner, sdk.PageRoleAdmin, sdk.PageRoleEditor},
	sdk.PageRoleEditor: {sdk.PageRoleOwner, sdk.PageRoleAdmin, sdk.PageRoleEditor},
	sdk.PageRoleAdmin:  {sdk.PageRoleOwner, sdk.PageRoleAdmin},
	sdk.PageRoleOwner:  {sdk.PageRoleOwner},
}

func (g *gatewayFacts) PageAccess(_ context.Context, q sdk.PageQuery) (*sdk.PageAccess, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if q.PageID != testPage {
		return &sdk.PageAccess{}, nil
	}
	if q.Need != sdk.PageRoleNone && !slices.Contains(meets[q.Need], g.roles[q.UserID]) {
		return nil, plugintest.PageRefusal()
	}
	out := g.page
	if q.AppID != "" && g.apps[q.AppID] == nil {
		out.AppLinked, out.AppProducts = false, nil
	}
	return &out, nil
}

func (g *gatewayFacts) AppInfo(_ context.Context, appID string) (*sdk.AppInfo, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if a, ok := g.apps[appID]; ok {
		out := *a
		return &out, nil
	}
	return &sdk.AppInfo{}, nil
}

const (
	testPage   = "500"
	liveApp    = "700"
	devApp     = "701"
	consumer   = "900"
	pageOwner  = "800"
	pageAdmin  = "801"
	pageEditor = "802"
)

type bundle struct {
	p     *sdk.Plugin
	tp    *plugintest.Plugin
	facts *gatewayFacts
	pool  *pgxpool.Pool
	svc   *service
}

func setup(t testing.TB) *bundle {
	t.Helper()
	pool := plugintest.Database(t)
	facts := &gatewayFacts{
		page: sdk.PageAccess{Exists: true, Published: true, ChatSurfacing: true, Name: "Demo Coffee", InboxMergeLinked: true,
			AppLinked: true, AppProducts: []string{"svcchat"}},
		apps: map[string]*sdk.AppInfo{
			liveApp: {Exists: true, Name: "Live Shop", Live: true, PlatformConfig: map[string]any{}},
			devApp:  {Exists: true, Name: "Dev Shop", PlatformConfig: map[string]any{}},
		},
		roles: map[string]sdk.PageRole{pageOwner: sdk.PageRoleOwner, pageAdmin: sdk.PageRoleAdmin, pageEditor: sdk.PageRoleEditor},
	}
	p := sdk.New(info)
	svc := newService(pool, readpool.PrimaryOnly(pool), p.Logger())
	svc.register(p)
	return &bundle{p: p, tp: plugintest.Start(t, p, plugintest.WithHost(facts)), facts: facts, pool: pool, svc: svc}
}

var (
	user     = sdk.Principal{Kind: sdk.TokenKindSession, UserID: consumer}
	staff    = sdk.Principal{Kind: sdk.TokenKindSession, UserID: "1", Staff: true}
	liveSend = sdk.Principal{Kind: sdk.TokenKindSystemUser, AppID: liveApp, Live: true, Scopes: []string{"svcchat:send"}}
	devSend  = sdk.Principal{Kind: sdk.TokenKindSystemUser, AppID: devApp, Scopes: []string{"svcchat:send"}}
	liveKey  = sdk.Principal{Kind: sdk.TokenKindAppKey, AppID: liveApp, Live: true}
)

func call[Res proto.Message](t *testing.T, b *bundle, method string, p sdk.Principal, req proto.Message) (Res, error) {
	t.Helper()
	return plugintest.Call[Res](context.Background(), b.tp, "/svc.svcchat.v1.SvcchatService/"+method, p, req)
}

func must[Res proto.Message](t *testing.T, b *bundle, method string, p sdk.Principal, req proto.Message) Res {
	t.Helper()
	res, err := call[Res](t, b, method, p, req)
	if err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	return res
}

func (b *bundle) userWrites(t *testing.T, text string) *svcchatv1.WriteToPageResponse {
	t.Helper()
	return must[*svcchatv1.WriteToPageResponse](t, b, "WriteToPage", user, &svcchatv1.WriteToPageRequest{PageId: testPage, Text: text})
}

func template(app sdk.Principal, name string, params map[string]any) *svcchatv1.SendMessageRequest {
	st, _ := structpb.NewStruct(params)
	return &svcchatv1.SendMessageRequest{PageId: testPage, To: strp(consumer), Type: strp("template"), TemplateName: strp(name), TemplateParams: st}
}

func TestALiveAppSendsOnlyApprovedTemplates(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.userWrites(t, "hi")
	must[*svcchatv1.Template](t, b, "CreateTemplate", liveKey, &svcchatv1.CreateTemplateRequest{AppId: liveApp, Name: "pickup", Body: "Ready, {{name}}!", Params: []string{"name"}})

	t.Run("a live app's draft is refused with 2018302", func(t *testing.T) {
		_, err := call[*svcchatv1.SendMessageResponse](t, b, "SendMessage", liveSend, template(liveSend, "pickup", map[string]any{"name": "Casey"}))
		plugintest.WantRefusal(t, err, 403, 10, 2018302)
	})
	t.Run("a live app cannot approve its own draft (2018305)", func(t *testing.T) {
		_, err := call[*svcchatv1.Template](t, b, "ApproveTemplate", liveKey, &svcchatv1.TemplateActionRequest{AppId: liveApp, Name: "pickup"})
		plugintest.WantRefusal(t, err, 409, 10, 2018305)
	})
	t.Run("the platform's approved defaults are sendable", func(t *testing.T) {
		must[*svcchatv1.SendMessageResponse](t, b, "SendMessage", liveSend, template(liveSend, "hello_world", nil))
	})

	// Submit, find it in the staff queue, approve, send.
	sub := must[*svcchatv1.Template](t, b, "SubmitTemplate", liveKey, &svcchatv1.TemplateActionRequest{AppId: liveApp, Name: "pickup"})
	if sub.GetStatus() != "pending_review" {
		t.Fatalf("submitted = %v", sub)
	}
	t.Run("a template under review is still refused with 2018302", func(t *testing.T) {
		_, err := call[*svcchatv1.SendMessageResponse](t, b, "SendMessage", liveSend, template(liveSend, "pickup", map[string]any{"name": "Casey"}))
		plugintest.WantRefusal(t, err, 403, 10, 2018302)
	})
	queue := must[*svcchatv1.ListTemplateQueueResponse](t, b, "ListTemplateQueue", staff, &svcchatv1.ListTemplateQueueRequest{})
	if len(queue.GetData()) != 1 || queue.GetData()[0].GetAppName() != "Live Shop" || queue.GetData()[0].GetName() != "pickup" ||
		queue.GetData()[0].GetStatus() != "pending_review" || queue.GetData()[0].GetSubmittedAt() == "" {
		t.Fatalf("queue = %v", queue)
	}
	id := queue.GetData()[0].GetId()
	t.Run("rejecting needs a reason", func(t *testing.T) {
		_, err := call[*svcchatv1.DecideTemplateResponse](t, b, "DecideTemplate", staff, &svcchatv1.DecideTemplateRequest{Id: id, Decision: "reject"})
		plugintest.WantRefusal(t, err, 400, 100, 0)
	})
	dec := must[*svcchatv1.DecideTemplateResponse](t, b, "DecideTemplate", staff, &svcchatv1.DecideTemplateRequest{Id: id, Decision: "approve"})
	if dec.GetTemplate().GetStatus() != "approved" || dec.GetTemplate().GetDecidedAt() == "" || dec.GetTemplate().GetAppId() != liveApp {
		t.Fatalf("decision = %v", dec)
	}
	t.Run("a decision on a template that is not pending is refused with 2018305", func(t *testing.T) {
		_, err := call[*svcchatv1.DecideTemplateResponse](t, b, "DecideTemplate", staff, &svcchatv1.DecideTemplateRequest{Id: id, Decision: "approve"})
		plugintest.WantRefusal(t, err, 409, 10, 2018305)
	})
	res := must[*svcchatv1.SendMessageResponse](t, b, "SendMessage", liveSend, template(liveSend, "pickup", map[string]any{"name": "Casey"}))
	if res.GetRecipientId() != consumer {
		t.Fatalf("send = %v", res)
	}
	if q := must[*svcchatv1.ListTemplateQueueResponse](t, b, "ListTemplateQueue", staff, &svcchatv1.ListTemplateQueueRequest{}); len(q.GetData()) != 0 {
		t.Fatalf("the queue still lists %v", q)
	}
}

func TestEditingARejectedTemplateMakesItADraftAgain(t *testing.T) {
	t.Parallel()
	b := setup(t)
	create := &svcchatv1.CreateTemplateRequest{AppId: liveApp, Name: "promo", Body: "Sale today", Params: []string{}}
	must[*svcchatv1.Template](t, b, "CreateTemplate", liveKey, create)
	must[*svcchatv1.Template](t, b, "SubmitTemplate", liveKey, &svcchatv1.TemplateActionRequest{AppId: liveApp, Name: "promo"})
	q := must[*svcchatv1.ListTemplateQueueResponse](t, b, "ListTemplateQueue", staff, &svcchatv1.ListTemplateQueueRequest{})
	dec := must[*svcchatv1.DecideTemplateResponse](t, b, "DecideTemplate", staff,
		&svcchatv1.DecideTemplateRequest{Id: q.GetData()[0].GetId(), Decision: "reject", Reason: "Promotional content is not transactional."})
	if dec.GetTemplate().GetStatus() != "rejected" || dec.GetTemplate().GetRejectionReason() == "" {
		t.Fatalf("decision = %v", dec)
	}
	list := must[*svcchatv1.ListTemplatesResponse](t, b, "ListTemplates", liveKey, &svcchatv1.ListTemplatesRequest{AppId: liveApp})
	if i := indexOf(list, "promo"); i < 0 || list.GetData()[i].GetStatus() != "rejected" || list.GetData()[i].GetRejectionReason() != "Promotional content is not transactional." {
		t.Fatalf("list = %v", list)
	}
	_, err := call[*svcchatv1.Template](t, b, "SubmitTemplate", liveKey, &svcchatv1.TemplateActionRequest{AppId: liveApp, Name: "promo"})
	plugintest.WantRefusal(t, err, 409, 10, 2018305)

	create.Body = "Your receipt is ready"
	edited := must[*svcchatv1.Template](t, b, "CreateTemplate", liveKey, create)
	if edited.GetStatus() != "draft" || edited.GetRejectionReason() != "" {
		t.Fatalf("edited = %v", edited)
	}
	if again := must[*svcchatv1.Template](t, b, "SubmitTemplate", liveKey, &svcchatv1.TemplateActionRequest{AppId: liveApp, Name: "promo"}); again.GetStatus() != "pending_review" {
		t.Fatalf("resubmitted = %v", again)
	}
}

func indexOf(list *svcchatv1.ListTemplatesResponse, name string) int {
	for i, t := range list.GetData() {
		if t.GetName() == name {
			return i
		}
	}
	return -1
}

func TestPlatformConfigTemplatesStartAsDraftsAndFollowTheConfig(t *testing.T) {
	t.Parallel()
	b := setup(t)
	cfg := map[string]any{"svcchat": map[string]any{"templates": map[string]any{
		"order_update": map[string]any{"body": "Order {{order_id}}: {{status}} (Dev Shop)", "params": []any{"order_id", "status"}},
	}}}
	b.facts.mu.Lock()
	b.facts.apps[devApp].PlatformConfig = cfg
	b.facts.mu.Unlock()
	b.userWrites(t, "hi")
	must[*svcchatv1.SendMessageResponse](t, b, "SendMessage", devSend, template(devSend, "order_update", map[string]any{"order_id": "7", "status": "packed"}))
	var text string
	if err := b.pool.QueryRow(context.Background(), "SELECT text FROM svcchat.messages WHERE app_id = $1", devApp).Scan(&text); err != nil || text != "Order 7: packed (Dev Shop)" {
		t.Fatalf("sent %q, %v", text, err)
	}
	list := must[*svcchatv1.ListTemplatesResponse](t, b, "ListTemplates", devSend, &svcchatv1.ListTemplatesRequest{AppId: devApp})
	if i := indexOf(list, "order_update"); i < 0 || list.GetData()[i].GetStatus() != "draft" {
		t.Fatalf("list = %v", list)
	}
	t.Run("a template the config declares cannot be created through the Graph", func(t *testing.T) {
		_, err := call[*svcchatv1.Template](t, b, "CreateTemplate", devSend, &svcchatv1.CreateTemplateRequest{AppId: devApp, Name: "order_update", Body: "x", Params: []string{}})
		plugintest.WantRefusal(t, err, 400, 100, 0)
	})

	// Removing it from the config brings the platform default back.
	b.facts.mu.Lock()
	b.facts.apps[devApp].PlatformConfig = map[string]any{}
	b.facts.mu.Unlock()
	list = must[*svcchatv1.ListTemplatesResponse](t, b, "ListTemplates", devSend, &svcchatv1.ListTemplatesRequest{AppId: devApp})
	if i := indexOf(list, "order_update"); i < 0 || list.GetData()[i].GetStatus() != "approved" || list.GetData()[i].GetBody() != defaultTemplates[1].Body {
		t.Fatalf("list = %v", list)
	}
}

func TestAnUnpublishedPageRefusesWritesAndSendsWith2018304(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.userWrites(t, "hi")
	b.facts.mu.Lock()
	b.facts.page.Published = false
	b.facts.mu.Unlock()
	_, err := call[*svcchatv1.WriteToPageResponse](t, b, "WriteToPage", user, &svcchatv1.WriteToPageRequest{PageId: testPage, Text: "again"})
	plugintest.WantRefusal(t, err, 403, 10, 2018304)
	_, err = call[*svcchatv1.SendMessageResponse](t, b, "SendMessage", devSend, &svcchatv1.SendMessageRequest{PageId: testPage, RecipientUserId: strp(consumer), Text: strp("x")})
	plugintest.WantRefusal(t, err, 403, 10, 2018304)
	t.Run("an opt-out still works on an unpublished Page", func(t *testing.T) {
		res := must[*svcchatv1.OptInResponse](t, b, "OptOut", user, &svcchatv1.OptOutRequest{PageId: testPage, UserId: consumer})
		if res.GetOptIn().GetStatus() != "opted_out" {
			t.Fatalf("opt-out = %v", res)
		}
	})
}

func TestANewConversationStartsWithTheAssistantWhenInboxAutomationIsOn(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.facts.mu.Lock()
	b.facts.page.InboxAutomation = true
	b.facts.mu.Unlock()
	w := b.userWrites(t, "hi")
	c := must[*svcchatv1.Conversation](t, b, "GetConversation", devSend, &svcchatv1.GetConversationRequest{PageId: testPage, ConversationId: w.GetConversationId()})
	if c.GetControl().GetHolder() != "svc_ai" || c.GetOptIn() != "active" || c.WindowExpiresAt == nil {
		t.Fatalf("conversation = %v", c)
	}
	must[*svcchatv1.SendMessageResponse](t, b, "SendMessage", devSend, &svcchatv1.SendMessageRequest{PageId: testPage, RecipientUserId: strp(consumer), Text: strp("x")})
	var holder, app, previous string
	if err := b.pool.QueryRow(context.Background(), "SELECT holder, holder_app_id, previous_holder FROM svcchat.conversations").Scan(&holder, &app, &previous); err != nil ||
		holder != "app" || app != devApp || previous != "svc_ai" {
		t.Fatalf("after the app's send: %s %s %s %v", holder, app, previous, err)
	}
}

func TestOptInAnswersTheRecordAndARepeatEmitsNothing(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for range 2 {
		res := must[*svcchatv1.OptInResponse](t, b, "OptIn", user, &svcchatv1.OptInRequest{PageId: testPage, Purposes: []string{"transactional"}})
		if o := res.GetOptIn(); o.GetStatus() != "active" || o.GetSource() != "mobile" || o.GetUserId() != consumer || o.GetPageId() != testPage ||
			len(o.GetPurposes()) != 1 || o.GetUpdatedAt() == "" {
			t.Fatalf("opt-in = %v", res)
		}
	}
	var n int
	if err := b.pool.QueryRow(context.Background(), "SELECT count(*) FROM core.outbox WHERE type = 'svcchat.opt_in'").Scan(&n); err != nil || n != 1 {
		t.Fatalf("%d opt-in events, %v", n, err)
	}
	t.Run("a template reaches an opted-in user who never wrote", func(t *testing.T) {
		res := must[*svcchatv1.SendMessageResponse](t, b, "SendMessage", devSend, template(devSend, "hello_world", nil))
		if res.GetConversationId() == "" {
			t.Fatalf("send = %v", res)
		}
	})
	t.Run("a session message to them is outside the window (2018278)", func(t *testing.T) {
		_, err := call[*svcchatv1.SendMessageResponse](t, b, "SendMessage", devSend, &svcchatv1.SendMessageRequest{PageId: testPage, RecipientUserId: strp(consumer), Text: strp("x")})
		plugintest.WantRefusal(t, err, 400, 10, 2018278)
	})
}

// CONTRACT §15: templates an app approved itself in development become
// pending_review when the app goes live and appear in the staff queue;
// until staff approve them a live send is refused with 2018302. Each
// parameter value is 1 to 1,024 code points (else 132000).
func TestGoingLiveReReviewsTemplatesTheAppApprovedItself(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.userWrites(t, "hi")
	devKey := sdk.Principal{Kind: sdk.TokenKindAppKey, AppID: devApp}
	must[*svcchatv1.Template](t, b, "CreateTemplate", devKey, &svcchatv1.CreateTemplateRequest{AppId: devApp, Name: "pickup", Body: "Ready, {{name}}!", Params: []string{"name"}})
	must[*svcchatv1.Template](t, b, "ApproveTemplate", devKey, &svcchatv1.TemplateActionRequest{AppId: devApp, Name: "pickup"})
	must[*svcchatv1.SendMessageResponse](t, b, "SendMessage", devSend, template(devSend, "pickup", map[string]any{"name": "Casey"}))

	t.Run("a parameter value of 1,024 code points is sent, one of 1,025 is refused with 132000", func(t *testing.T) {
		must[*svcchatv1.SendMessageResponse](t, b, "SendMessage", devSend, template(devSend, "pickup", map[string]any{"name": strings.Repeat("é", 1024)}))
		_, err := call[*svcchatv1.SendMessageResponse](t, b, "SendMessage", devSend, template(devSend, "pickup", map[string]any{"name": strings.Repeat("é", 1025)}))
		plugintest.WantRefusal(t, err, 400, 132000, 0)
		_, err = call[*svcchatv1.SendMessageResponse](t, b, "SendMessage", devSend, template(devSend, "pickup", map[string]any{"name": ""}))
		plugintest.WantRefusal(t, err, 400, 132000, 0)
	})

	// The app goes live; the gateway tells svcchat.
	b.facts.mu.Lock()
	b.facts.apps[devApp].Live = true
	b.facts.mu.Unlock()
	wentLive := sdk.Principal{Kind: sdk.TokenKindAppKey, AppID: devApp, Live: true}
	liveDevSend := sdk.Principal{Kind: sdk.TokenKindSystemUser, AppID: devApp, Live: true, Scopes: []string{"svcchat:send"}}

	t.Run("a live send of a template the app approved itself is refused with 2018302, even before the gateway says it went live", func(t *testing.T) {
		_, err := call[*svcchatv1.SendMessageResponse](t, b, "SendMessage", liveDevSend, template(liveDevSend, "pickup", map[string]any{"name": "Casey"}))
		plugintest.WantRefusal(t, err, 403, 10, 2018302)
	})
	list := must[*svcchatv1.ListTemplatesResponse](t, b, "AppWentLive", wentLive, &svcchatv1.AppWentLiveRequest{AppId: devApp})
	for _, tpl := range list.GetData() {
		if tpl.GetName() == "pickup" && tpl.GetStatus() != "pending_review" {
			t.Fatalf("after going live pickup is %s, want pending_review", tpl.GetStatus())
		}
	}
	queue := must[*svcchatv1.ListTemplateQueueResponse](t, b, "ListTemplateQueue", staff, &svcchatv1.ListTemplateQueueRequest{})
	if len(queue.GetData()) != 1 || queue.GetData()[0].GetAppId() != devApp || queue.GetData()[0].GetName() != "pickup" || queue.GetData()[0].GetSubmittedAt() == "" {
		t.Fatalf("the staff queue = %v, want the self-approved template", queue)
	}
	t.Run("the platform's templates stay approved", func(t *testing.T) {
		must[*svcchatv1.SendMessageResponse](t, b, "SendMessage", liveDevSend, template(liveDevSend, "hello_world", nil))
	})
	must[*svcchatv1.DecideTemplateResponse](t, b, "DecideTemplate", staff, &svcchatv1.DecideTemplateRequest{Id: queue.GetData()[0].GetId(), Decision: "approve"})
	t.Run("once staff approve it, it is sent, and going live again changes nothing", func(t *testing.T) {
		must[*svcchatv1.ListTemplatesResponse](t, b, "AppWentLive", wentLive, &svcchatv1.AppWentLiveRequest{AppId: devApp})
		must[*svcchatv1.SendMessageResponse](t, b, "SendMessage", liveDevSend, template(liveDevSend, "pickup", map[string]any{"name": "Casey"}))
	})
}

// TestTemplatesListPagesWithLimitAsEveryList checks CONTRACT §2 for
// app/<id>/svcchat_templates (issue 28 item 8): limit, after and before page
// it as every list, the platform's defaults first, then the app's
// templates in the order they were created, and a template created
// between two reads does not move the cursors.
func TestTemplatesListPagesWithLimitAsEveryList(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for _, name := range []string{"zeta", "alpha"} {
		must[*svcchatv1.Template](t, b, "CreateTemplate", devSend, &svcchatv1.CreateTemplateRequest{AppId: devApp, Name: name, Body: "Hi", Params: []string{}})
	}
	names := func(l *svcchatv1.ListTemplatesResponse) string {
		var out []string
		for _, t := range l.GetData() {
			out = append(out, t.GetName())
		}
		return strings.Join(out, ",")
	}
	list := func(limit int32, after, before string) *svcchatv1.ListTemplatesResponse {
		return must[*svcchatv1.ListTemplatesResponse](t, b, "ListTemplates", devSend,
			&svcchatv1.ListTemplatesRequest{AppId: devApp, Limit: limit, After: after, Before: before})
	}
	first := list(2, "", "")
	if names(first) != "hello_world,order_update" || !first.GetPaging().GetHasNext() || first.GetPaging().GetHasPrevious() {
		t.Fatalf("first page %s, paging %v", names(first), first.GetPaging())
	}
	// Created between two reads: it comes last, and the next page is the
	// one the cursor promised, then it.
	must[*svcchatv1.Template](t, b, "CreateTemplate", devSend, &svcchatv1.CreateTemplateRequest{AppId: devApp, Name: "beta", Body: "Hi", Params: []string{}})
	second := list(2, first.GetPaging().GetAfter(), "")
	if names(second) != "zeta,alpha" || !second.GetPaging().GetHasNext() || !second.GetPaging().GetHasPrevious() {
		t.Fatalf("second page %s, paging %v", names(second), second.GetPaging())
	}
	if last := list(2, second.GetPaging().GetAfter(), ""); names(last) != "beta" || last.GetPaging().GetHasNext() {
		t.Fatalf("last page %s, paging %v", names(last), last.GetPaging())
	}
	if back := list(2, "", second.GetPaging().GetBefore()); names(back) != "hello_world,order_update" || back.GetPaging().GetHasPrevious() {
		t.Fatalf("back from the second page %s, paging %v", names(back), back.GetPaging())
	}
	if all := list(0, "", ""); names(all) != "hello_world,order_update,zeta,alpha,beta" {
		t.Fatalf("without a limit %s", names(all))
	}
	_, err := call[*svcchatv1.ListTemplatesResponse](t, b, "ListTemplates", devSend, &svcchatv1.ListTemplatesRequest{AppId: devApp, After: "bm9wZQ"})
	plugintest.WantRefusal(t, err, 400, 100, 0)
}
