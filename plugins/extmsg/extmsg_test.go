package main

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"google.golang.org/protobuf/proto"

	extmsgv1 "github.com/svcplatform/svc/gen/svc/extmsg/v1"
	extmsgsql "github.com/svcplatform/svc/plugins/extmsg/sql"
	"github.com/svcplatform/svc/sdk"
	"github.com/svcplatform/svc/sdk/plugintest"
)

func TestMain(m *testing.M) { plugintest.Main(m, "extmsg", extmsgsql.Migrations()) }

const (
	owner    = "1000000001"
	stranger = "1000000002"
	staffer  = "1000000003"
	person   = "1000000004" // a person of the messaging app
	nobody   = "1000000099" // no user of the platform
	devApp   = "2000000001" // in development mode
	liveApp  = "2000000002" // live
	// ownerBusiness is a business on which owner has a role.
	ownerBusiness = "6000000001"

	procSignup  = "/svc.extmsg.v1.ExtmsgService/EmbeddedSignup"
	procList    = "/svc.extmsg.v1.ExtmsgService/ListTemplates"
	procCreate  = "/svc.extmsg.v1.ExtmsgService/CreateTemplate"
	procApprove = "/svc.extmsg.v1.ExtmsgService/ApproveTemplate"
	procSubmit  = "/svc.extmsg.v1.ExtmsgService/SubmitTemplate"
	procQueue   = "/svc.extmsg.v1.ExtmsgService/ListTemplateQueue"
	procDecide  = "/svc.extmsg.v1.ExtmsgService/DecideTemplate"
)

func token(user, app string) sdk.Principal {
	return sdk.Principal{Kind: sdk.TokenKindUser, UserID: user, AppID: app, Scopes: []string{"extmsg_business_management"}}
}

func session(user string) sdk.Principal {
	return sdk.Principal{Kind: sdk.TokenKindSession, UserID: user, Staff: user == staffer}
}

// apps stands in for the gateway's Host service: devApp and liveApp exist.
type apps struct {
	plugintest.NoHost
}

func (apps) AppInfo(_ context.Context, appID string) (*sdk.AppInfo, error) {
	switch appID {
	case devApp:
		return &sdk.AppInfo{Exists: true, Name: "Dev app"}, nil
	case liveApp:
		return &sdk.AppInfo{Exists: true, Name: "Live app", Live: true}, nil
	}
	return &sdk.AppInfo{}, nil
}

// BusinessAccess answers as the gateway for ownerBusiness, on which owner
// alone has a role.
func (apps) BusinessAccess(_ context.Context, q sdk.BusinessQuery) error {
	if q.BusinessID != ownerBusiness {
		return sdk.NotFound("Business " + q.BusinessID)
	}
	if q.UserID != owner {
		return plugintest.BusinessRefusal()
	}
	return nil
}

func (apps) UserInfo(_ context.Context, userID string) (*sdk.UserInfo, error) {
	return &sdk.UserInfo{Exists: userID != nobody, Name: "Person " + userID}, nil
}

type bundle struct {
	tp   *plugintest.Plugin
	pool *pgxpool.Pool
}

func setup(t *testing.T) *bundle {
	t.Helper()
	pool := plugintest.Database(t)
	p := sdk.New(sdk.Info{Name: "extmsg", Version: version, Events: events})
	(&service{pool: pool}).register(p)
	return &bundle{tp: plugintest.Start(t, p, plugintest.WithHost(apps{})), pool: pool}
}

func call[T proto.Message](t testing.TB, b *bundle, proc string, who sdk.Principal, req proto.Message) (T, error) {
	t.Helper()
	return plugintest.CallT[T](t, b.tp, proc, who, req)
}

func must[T proto.Message](t testing.TB, b *bundle, proc string, who sdk.Principal, req proto.Message) T {
	t.Helper()
	res, err := call[T](t, b, proc, who, req)
	if err != nil {
		t.Fatalf("%s: %v", proc, err)
	}
	return res
}

func (b *bundle) signup(t *testing.T, app string) string {
	t.Helper()
	res := must[*extmsgv1.EmbeddedSignupResponse](t, b, procSignup, token(owner, app),
		&extmsgv1.EmbeddedSignupRequest{BusinessId: ownerBusiness, AppId: app, DisplayName: "Demo Coffee"})
	if res.GetAccountId() == "" || res.GetStatus() != "connected" {
		t.Fatalf("signup answered %v", res)
	}
	return res.GetAccountId()
}

func (b *bundle) draft(t *testing.T, acct, app, name string) *extmsgv1.Template {
	t.Helper()
	return must[*extmsgv1.Template](t, b, procCreate, token(owner, app),
		&extmsgv1.CreateTemplateRequest{AccountId: acct, Name: name, Body: "Order {{order_id}} shipped.", Params: []string{"order_id"}})
}

func TestEmbeddedSignupConnectsOneAccountPerBusinessAndApp(t *testing.T) {
	t.Parallel()
	b := setup(t)
	first := b.signup(t, devApp)
	if again := b.signup(t, devApp); again != first {
		t.Fatalf("signing up again made account %s, want %s", again, first)
	}
	if other := b.signup(t, liveApp); other == first {
		t.Fatal("two apps share one account")
	}
	t.Run("an app that does not exist is not found", func(t *testing.T) {
		_, err := call[*extmsgv1.EmbeddedSignupResponse](t, b, procSignup, session(owner),
			&extmsgv1.EmbeddedSignupRequest{BusinessId: ownerBusiness, AppId: "2999999999", DisplayName: "x"})
		plugintest.WantRefusal(t, err, 404, 100, 33)
	})
	var n int
	if err := b.pool.QueryRow(context.Background(), `SELECT count(*) FROM extmsg.accounts`).Scan(&n); err != nil || n != 2 {
		t.Fatalf("%d accounts stored (%v), want 2", n, err)
	}
}

func TestADevelopmentAppApprovesItsOwnDraftAndCannotSubmitIt(t *testing.T) {
	t.Parallel()
	b := setup(t)
	acct := b.signup(t, devApp)
	if d := b.draft(t, acct, devApp, "shipping"); d.GetStatus() != "draft" || d.GetAccountId() != acct {
		t.Fatalf("draft %v", d)
	}
	_, err := call[*extmsgv1.Template](t, b, procSubmit, token(owner, devApp), &extmsgv1.TemplateActionRequest{AccountId: acct, Name: "shipping"})
	plugintest.WantRefusal(t, err, 409, 10, 2018305)
	got := must[*extmsgv1.Template](t, b, procApprove, token(owner, devApp), &extmsgv1.TemplateActionRequest{AccountId: acct, Name: "shipping"})
	if got.GetStatus() != "approved" {
		t.Fatalf("approve answered %v", got)
	}
	list := must[*extmsgv1.ListTemplatesResponse](t, b, procList, session(owner), &extmsgv1.ListTemplatesRequest{AccountId: acct})
	if len(list.GetData()) != 1 || list.GetData()[0].GetStatus() != "approved" {
		t.Fatalf("templates %v", list)
	}
	_, err = call[*extmsgv1.Template](t, b, procApprove, token(owner, devApp), &extmsgv1.TemplateActionRequest{AccountId: acct, Name: "nothing"})
	plugintest.WantRefusal(t, err, 404, 132001, 0)
}

func TestALiveAppsTemplateGoesThroughTheStaffQueue(t *testing.T) {
	t.Parallel()
	b := setup(t)
	acct := b.signup(t, liveApp)
	b.draft(t, acct, liveApp, "shipping")
	b.draft(t, acct, liveApp, "receipt")
	_, err := call[*extmsgv1.Template](t, b, procApprove, token(owner, liveApp), &extmsgv1.TemplateActionRequest{AccountId: acct, Name: "shipping"})
	if e := plugintest.WantRefusal(t, err, 409, 10, 2018305); e.Message != "A live app cannot approve its own template; submit it for review." {
		t.Fatalf("refusal %+v", e)
	}
	for _, name := range []string{"receipt", "shipping"} {
		if got := must[*extmsgv1.Template](t, b, procSubmit, token(owner, liveApp), &extmsgv1.TemplateActionRequest{AccountId: acct, Name: name}); got.GetStatus() != "pending_review" {
			t.Fatalf("submit answered %v", got)
		}
	}
	queue := must[*extmsgv1.ListTemplateQueueResponse](t, b, procQueue, session(staffer), &extmsgv1.ListTemplateQueueRequest{Limit: 1})
	if len(queue.GetData()) != 1 || !queue.GetPaging().GetHasNext() {
		t.Fatalf("queue %v", queue)
	}
	first := queue.GetData()[0]
	if first.GetName() != "receipt" || first.GetAppName() != "Live app" || first.GetAppId() != liveApp || first.GetBusinessId() != ownerBusiness ||
		first.GetAccountId() != acct || first.GetStatus() != "pending_review" || first.GetSubmittedAt() == "" {
		t.Fatalf("oldest submission first: %v", first)
	}
	rest := must[*extmsgv1.ListTemplateQueueResponse](t, b, procQueue, session(staffer), &extmsgv1.ListTemplateQueueRequest{After: queue.GetPaging().GetAfter()})
	if len(rest.GetData()) != 1 || rest.GetData()[0].GetName() != "shipping" {
		t.Fatalf("second page %v", rest)
	}
	shipping := rest.GetData()[0].GetId()

	_, err = call[*extmsgv1.DecideTemplateResponse](t, b, procDecide, session(staffer), &extmsgv1.DecideTemplateRequest{Id: first.GetId(), Decision: "reject"})
	if e := plugintest.WantRefusal(t, err, 400, 100, 0); e.Field != "reason" {
		t.Fatalf("refusal %+v", e)
	}
	rejected := must[*extmsgv1.DecideTemplateResponse](t, b, procDecide, session(staffer),
		&extmsgv1.DecideTemplateRequest{Id: first.GetId(), Decision: "reject", Reason: "Promotional content in a utility template."})
	if rejected.GetTemplate().GetStatus() != "rejected" || rejected.GetTemplate().GetRejectionReason() == "" || rejected.GetTemplate().GetDecidedAt() == "" {
		t.Fatalf("reject answered %v", rejected)
	}
	approved := must[*extmsgv1.DecideTemplateResponse](t, b, procDecide, session(staffer), &extmsgv1.DecideTemplateRequest{Id: shipping, Decision: "approve"})
	if approved.GetTemplate().GetStatus() != "approved" {
		t.Fatalf("approve answered %v", approved)
	}
	t.Run("a decision on a template that is not pending is refused with 2018305", func(t *testing.T) {
		_, err := call[*extmsgv1.DecideTemplateResponse](t, b, procDecide, session(staffer), &extmsgv1.DecideTemplateRequest{Id: shipping, Decision: "reject", Reason: "late"})
		plugintest.WantRefusal(t, err, 409, 10, 2018305)
	})
	t.Run("a decision on a template that does not exist is not found", func(t *testing.T) {
		_, err := call[*extmsgv1.DecideTemplateResponse](t, b, procDecide, session(staffer), &extmsgv1.DecideTemplateRequest{Id: "no-such-template", Decision: "approve"})
		plugintest.WantRefusal(t, err, 404, 100, 33)
	})
	t.Run("editing a rejected template makes it a draft again, out of the queue", func(t *testing.T) {
		got := must[*extmsgv1.Template](t, b, procCreate, token(owner, liveApp),
			&extmsgv1.CreateTemplateRequest{AccountId: acct, Name: "receipt", Body: "Thanks for order {{order_id}}.", Params: []string{"order_id"}})
		if got.GetStatus() != "draft" || got.GetRejectionReason() != "" {
			t.Fatalf("edit answered %v", got)
		}
		if q := must[*extmsgv1.ListTemplateQueueResponse](t, b, procQueue, session(staffer), &extmsgv1.ListTemplateQueueRequest{}); len(q.GetData()) != 0 {
			t.Fatalf("queue %v", q)
		}
	})
}

func TestTemplatesOfAnAccountAreTheBusinesssAndItsAppsOnly(t *testing.T) {
	t.Parallel()
	b := setup(t)
	acct := b.signup(t, devApp)
	b.draft(t, acct, devApp, "shipping")
	_, err := call[*extmsgv1.ListTemplatesResponse](t, b, procList, token(stranger, devApp), &extmsgv1.ListTemplatesRequest{AccountId: acct})
	plugintest.WantRefusal(t, err, 404, 100, 33)
	_, err = call[*extmsgv1.ListTemplatesResponse](t, b, procList, token(owner, liveApp), &extmsgv1.ListTemplatesRequest{AccountId: acct})
	plugintest.WantRefusal(t, err, 403, 10, 0)
	for _, unknown := range []string{"9000009999", "waba_1"} {
		_, err = call[*extmsgv1.ListTemplatesResponse](t, b, procList, session(owner), &extmsgv1.ListTemplatesRequest{AccountId: unknown})
		plugintest.WantRefusal(t, err, 404, 100, 33)
	}
	bad := []struct {
		rule, name, body string
		params           []string
		field            string
	}{
		{"an undeclared placeholder is refused naming params", "a", "Hi {{name}}", nil, "params"},
		{"an unclosed placeholder is refused naming body", "a", "Hi {{name", []string{"name"}, "body"},
		{"a name with capitals is refused", "Shipping", "Hi", nil, "name"},
	}
	for _, c := range bad {
		t.Run(c.rule, func(t *testing.T) {
			_, err := call[*extmsgv1.Template](t, b, procCreate, session(owner), &extmsgv1.CreateTemplateRequest{AccountId: acct, Name: c.name, Body: c.body, Params: c.params})
			if e := plugintest.WantRefusal(t, err, 400, 100, 0); e.Field != c.field {
				t.Fatalf("refusal names %q, want %q", e.Field, c.field)
			}
		})
	}
	var n int
	if err := b.pool.QueryRow(context.Background(), `SELECT count(*) FROM extmsg.templates`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("%d templates stored (%v), want 1", n, err)
	}
}
