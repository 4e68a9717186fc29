package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	lensesv1 "github.com/svcplatform/svc/gen/svc/lenses/v1"
	"github.com/svcplatform/svc/internal/pgtest"
	lensessql "github.com/svcplatform/svc/plugins/lenses/sql"
	"github.com/svcplatform/svc/sdk"
	"github.com/svcplatform/svc/sdk/migrate"
	"github.com/svcplatform/svc/sdk/plugintest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// The review, row by row: every (status, action) is checked, the allowed
// steps against the table's comment and every other step refused with 409.
func TestLensReviewRowByRow(t *testing.T) {
	t.Parallel()
	allowed := []struct {
		rule   string
		from   Status
		action Action
		to     Status
	}{
		{"a draft is edited and stays a draft", Draft, Edit, Draft},
		{"a draft is submitted to review", Draft, Submit, InReview},
		{"staff approve a lens in review", InReview, Approve, Approved},
		{"staff reject a lens in review", InReview, Reject, Rejected},
		{"the partner withdraws a lens from review", InReview, Withdraw, Draft},
		{"the partner withdraws an approved lens", Approved, Withdraw, Draft},
		{"editing a rejected lens makes it a draft again", Rejected, Edit, Draft},
	}
	ok := map[string]bool{}
	for _, a := range allowed {
		ok[fmt.Sprint(a.from, a.action)] = true
		t.Run(a.rule, func(t *testing.T) {
			got, err := next(a.from, a.action)
			if err != nil || got != a.to {
				t.Fatalf("%s %s = %q, %v; want %q", a.from, a.action, got, err, a.to)
			}
		})
	}
	for _, from := range []Status{Draft, InReview, Approved, Rejected} {
		for _, action := range []Action{Edit, Submit, Withdraw, Approve, Reject} {
			if ok[fmt.Sprint(from, action)] {
				continue
			}
			t.Run(fmt.Sprintf("%s on a %s lens is refused", action, from), func(t *testing.T) {
				got, err := next(from, action)
				e, isErr := err.(*sdk.Error)
				if !isErr || e.HTTPStatus != 409 || e.Subcode != 2018305 || e.Message == "" {
					t.Fatalf("= %q, %v; want 409/2018305", got, err)
				}
			})
		}
	}
}

// facts are the gateway's answers about apps.
type facts struct {
	plugintest.NoHost
	apps map[string]*sdk.AppInfo
}

func (f facts) AppInfo(_ context.Context, appID string) (*sdk.AppInfo, error) {
	if a, ok := f.apps[appID]; ok {
		return a, nil
	}
	return &sdk.AppInfo{}, nil
}

const (
	lensApp  = "700" // has the lenses product
	otherApp = "701" // has it too
	plainApp = "702" // has not
)

var (
	staff   = sdk.Principal{Kind: sdk.TokenKindSession, UserID: "1", Staff: true}
	person  = sdk.Principal{Kind: sdk.TokenKindSession, UserID: "2"}
	partner = sdk.Principal{Kind: sdk.TokenKindAppKey, AppID: lensApp}
	icon    = "data:image/svg+xml,%3Csvg xmlns=%22http://www.w3.org/2000/svg%22/%3E"
)

func start(t *testing.T) *plugintest.Plugin {
	t.Helper()
	t.Setenv(migrate.EnvDatabaseURL, pgtest.NewDatabase(t))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	pool, err := migrate.Open(ctx, "lenses", lensessql.Migrations(), 2)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	p := sdk.New(sdk.Info{Name: "lenses", Version: version})
	register(p, pool)
	return plugintest.Start(t, p, plugintest.WithHost(facts{apps: map[string]*sdk.AppInfo{
		lensApp:  {Exists: true, Name: "Lens Studio", Products: []string{"lenses"}},
		otherApp: {Exists: true, Name: "Other", Products: []string{"lenses"}},
		plainApp: {Exists: true, Name: "Plain", Products: []string{"svcchat"}},
	}}))
}

func call[Res proto.Message](t *testing.T, tp *plugintest.Plugin, method string, p sdk.Principal, req proto.Message) (Res, error) {
	t.Helper()
	return plugintest.Call[Res](context.Background(), tp, "/svc.lenses.v1.LensesService/"+method, p, req)
}

func must[Res proto.Message](t *testing.T, tp *plugintest.Plugin, method string, p sdk.Principal, req proto.Message) Res {
	t.Helper()
	res, err := call[Res](t, tp, method, p, req)
	if err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	return res
}

func carousel(t *testing.T, tp *plugintest.Plugin) string {
	t.Helper()
	res := must[*lensesv1.ListLensesResponse](t, tp, "ListLenses", person, &lensesv1.ListLensesRequest{})
	var names []string
	for _, l := range res.GetData() {
		names = append(names, l.GetName())
	}
	return strings.Join(names, ",")
}

func TestOnlyApprovedLensesReachTheCarouselInApprovalOrder(t *testing.T) {
	tp := start(t)
	if got := carousel(t, tp); got != "" {
		t.Fatalf("a fresh install offers %q", got)
	}
	var ids []string
	for _, name := range []string{"Sunny", "Ocean", "Mono"} {
		l := must[*lensesv1.Lens](t, tp, "CreateLens", partner, &lensesv1.CreateLensRequest{AppId: lensApp, Name: name, IconUrl: icon})
		if l.GetStatus() != "draft" {
			t.Fatalf("new lens %v", l)
		}
		ids = append(ids, l.GetId())
	}
	for _, id := range []string{ids[1], ids[0]} { // Ocean is submitted first
		must[*lensesv1.Lens](t, tp, "UpdateLens", partner, &lensesv1.UpdateLensRequest{AppId: lensApp, LensId: id, Action: "submit"})
	}
	if got := carousel(t, tp); got != "" {
		t.Fatalf("lenses in review are offered: %q", got)
	}
	queue := must[*lensesv1.ListLensQueueResponse](t, tp, "ListLensQueue", staff, &lensesv1.ListLensQueueRequest{})
	if len(queue.GetData()) != 2 || queue.GetData()[0].GetAppName() != "Lens Studio" || queue.GetData()[0].GetSubmittedAt() == "" {
		t.Fatalf("queue %v", queue)
	}
	must[*lensesv1.Lens](t, tp, "DecideLens", staff, &lensesv1.DecideLensRequest{Id: ids[0], Decision: "approve"})
	must[*lensesv1.Lens](t, tp, "DecideLens", staff, &lensesv1.DecideLensRequest{Id: ids[1], Decision: "approve"})
	if got := carousel(t, tp); got != "Sunny,Ocean" {
		t.Fatalf("carousel %q", got)
	}
	// Withdrawing an approved lens takes it off the carousel.
	must[*lensesv1.Lens](t, tp, "UpdateLens", partner, &lensesv1.UpdateLensRequest{AppId: lensApp, LensId: ids[0], Action: "withdraw"})
	if got := carousel(t, tp); got != "Ocean" {
		t.Fatalf("after withdrawing: %q", got)
	}
}

func TestARejectedLensCarriesItsReasonAndIsEditedBeforeResubmission(t *testing.T) {
	tp := start(t)
	l := must[*lensesv1.Lens](t, tp, "CreateLens", partner, &lensesv1.CreateLensRequest{AppId: lensApp, Name: "Blur", IconUrl: icon})
	must[*lensesv1.Lens](t, tp, "UpdateLens", partner, &lensesv1.UpdateLensRequest{AppId: lensApp, LensId: l.GetId(), Action: "submit"})
	_, err := call[*lensesv1.Lens](t, tp, "DecideLens", staff, &lensesv1.DecideLensRequest{Id: l.GetId(), Decision: "reject", Reason: "  "})
	if e := plugintest.WantRefusal(t, err, 400, 100, 0); e.Field != "reason" {
		t.Fatalf("field %q", e.Field)
	}
	r := must[*lensesv1.Lens](t, tp, "DecideLens", staff, &lensesv1.DecideLensRequest{Id: l.GetId(), Decision: "reject", Reason: "Icon unreadable"})
	if r.GetStatus() != "rejected" || r.GetRejectionReason() != "Icon unreadable" || r.GetDecidedAt() == "" {
		t.Fatalf("rejected %v", r)
	}
	list := must[*lensesv1.ListAppLensesResponse](t, tp, "ListAppLenses", partner, &lensesv1.ListAppLensesRequest{AppId: lensApp})
	if len(list.GetData()) != 1 || list.GetData()[0].GetRejectionReason() != "Icon unreadable" {
		t.Fatalf("app's lenses %v", list)
	}
	_, err = call[*lensesv1.Lens](t, tp, "UpdateLens", partner, &lensesv1.UpdateLensRequest{AppId: lensApp, LensId: l.GetId(), Action: "submit"})
	plugintest.WantRefusal(t, err, 409, 10, 2018305)
	_, err = call[*lensesv1.Lens](t, tp, "DecideLens", staff, &lensesv1.DecideLensRequest{Id: l.GetId(), Decision: "approve"})
	plugintest.WantRefusal(t, err, 409, 10, 2018305)
	e := must[*lensesv1.Lens](t, tp, "UpdateLens", partner, &lensesv1.UpdateLensRequest{AppId: lensApp, LensId: l.GetId(), Action: "edit",
		Name: "Blur 2", IconUrl: "data:image/png;base64,iVBORw0KGgo="})
	if e.GetStatus() != "draft" || e.GetRejectionReason() != "" || e.GetDecidedAt() != "" || e.GetName() != "Blur 2" {
		t.Fatalf("edited %v", e)
	}
}

func TestALensOfAnotherAppDoesNotExistForTheCaller(t *testing.T) {
	tp := start(t)
	l := must[*lensesv1.Lens](t, tp, "CreateLens", partner, &lensesv1.CreateLensRequest{AppId: lensApp, Name: "Mine", IconUrl: icon})
	other := sdk.Principal{Kind: sdk.TokenKindAppKey, AppID: otherApp}
	for _, action := range []string{"submit", "withdraw"} {
		_, err := call[*lensesv1.Lens](t, tp, "UpdateLens", other, &lensesv1.UpdateLensRequest{AppId: otherApp, LensId: l.GetId(), Action: action})
		plugintest.WantRefusal(t, err, 404, 100, 33)
	}
	list := must[*lensesv1.ListAppLensesResponse](t, tp, "ListAppLenses", other, &lensesv1.ListAppLensesRequest{AppId: otherApp})
	if len(list.GetData()) != 0 {
		t.Fatalf("the other app sees %v", list)
	}
}

func TestAnAppWithoutTheLensesProductMakesNoLens(t *testing.T) {
	tp := start(t)
	_, err := call[*lensesv1.Lens](t, tp, "CreateLens", sdk.Principal{Kind: sdk.TokenKindAppKey, AppID: plainApp},
		&lensesv1.CreateLensRequest{AppId: plainApp, Name: "X", IconUrl: icon})
	plugintest.WantRefusal(t, err, 403, 10, 2018303)
}

func TestALensIconIsAnImageDataURL(t *testing.T) {
	tp := start(t)
	for _, bad := range []string{"https://cdn.example/x.png", "javascript:alert(1)", "data:text/html,<b>", "data:image/svg+xml", "data:image/x-icon,AAAA"} {
		_, err := call[*lensesv1.Lens](t, tp, "CreateLens", partner, &lensesv1.CreateLensRequest{AppId: lensApp, Name: "X", IconUrl: bad})
		if e := plugintest.WantRefusal(t, err, 400, 100, 0); e.Field != "icon_url" {
			t.Fatalf("%s: field %q", bad, e.Field)
		}
	}
}

func TestOpenWithoutADatabaseURLSaysWhy(t *testing.T) {
	t.Setenv(migrate.EnvDatabaseURL, "")
	_, err := migrate.Open(context.Background(), "lenses", lensessql.Migrations(), 2)
	if err == nil || !strings.Contains(err.Error(), "SVC_DATABASE_URL") {
		t.Fatalf("got %v", err)
	}
}
