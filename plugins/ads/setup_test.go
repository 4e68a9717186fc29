package main

import (
	"context"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"google.golang.org/protobuf/proto"

	adssql "github.com/svcplatform/svc/plugins/ads/sql"
	"github.com/svcplatform/svc/sdk"
	"github.com/svcplatform/svc/sdk/plugintest"
)

func TestMain(m *testing.M) { plugintest.Main(m, "ads", adssql.Migrations()) }

const (
	owner    = "1000000001"
	consumer = "1000000002"
	// colleague has a role on the business holding an ad account, when a
	// test puts one in a business (bundle.hold).
	colleague = "1000000003"
	appID     = "2000000001"

	procListMine       = "/svc.ads.v1.AdsService/ListMyAdAccounts"
	procCreateAccount  = "/svc.ads.v1.AdsService/CreateAdAccount"
	procGetAccount     = "/svc.ads.v1.AdsService/GetAdAccount"
	procListCampaigns  = "/svc.ads.v1.AdsService/ListLeadCampaigns"
	procCreateCampaign = "/svc.ads.v1.AdsService/CreateLeadCampaign"
	procListForms      = "/svc.ads.v1.AdsService/ListLeadgenForms"
	procCreateForm     = "/svc.ads.v1.AdsService/CreateLeadgenForm"
	procGetForm        = "/svc.ads.v1.AdsService/GetLeadgenForm"
	procSubmitLead     = "/svc.ads.v1.AdsService/SubmitLead"
	procListLeads      = "/svc.ads.v1.AdsService/ListLeads"
)

func user(id string) sdk.Principal {
	return sdk.Principal{Kind: sdk.TokenKindUser, UserID: id, AppID: appID,
		Scopes: []string{"ads_read", "ads_management", "leads_retrieval"}}
}

func session(id string) sdk.Principal {
	return sdk.Principal{Kind: sdk.TokenKindSession, UserID: id}
}

// users stands in for the gateway's Host service: every user exists and
// is called by its id; an ad account a test puts in a business (hold) is
// the business's asset, with an admin and an employee, and the gateway's
// rule decides: an admin has any role, an employee EMPLOYEE only.
type users struct {
	plugintest.NoHost
	mu   sync.Mutex
	held map[string][2]string // ad account id → {admin, employee}
}

func (h *users) BusinessAccess(_ context.Context, q sdk.BusinessQuery) error {
	h.mu.Lock()
	people, ok := h.held[q.AssetID]
	h.mu.Unlock()
	switch {
	case q.AssetType != "AD_ACCOUNT" || !ok:
		return sdk.NotFound("Business holding " + q.AssetType + " " + q.AssetID)
	case q.UserID == people[0], q.UserID == people[1] && q.Need == sdk.BusinessRoleEmployee:
		return nil
	}
	return plugintest.BusinessRefusal()
}

func (*users) UserInfo(_ context.Context, userID string) (*sdk.UserInfo, error) {
	if userID == nobody {
		return &sdk.UserInfo{}, nil
	}
	return &sdk.UserInfo{Exists: true, Name: "User " + userID}, nil
}

// nobody is the one id that names no user.
const nobody = "1999999999"

type bundle struct {
	tp   *plugintest.Plugin
	pool *pgxpool.Pool
	host *users
}

// hold puts the ad account in a business of which admin is an admin and
// employee an employee.
func (b *bundle) hold(account, admin, employee string) {
	b.host.mu.Lock()
	defer b.host.mu.Unlock()
	b.host.held[account] = [2]string{admin, employee}
}

// setup runs the plugin in-process on a fresh database.
func setup(t testing.TB, development bool) *bundle {
	t.Helper()
	return setupService(t, &service{development: development})
}

// setupService runs svc (its pool set here) in-process on a fresh
// database.
func setupService(t testing.TB, svc *service) *bundle {
	t.Helper()
	svc.pool = plugintest.Database(t)
	p := sdk.New(sdk.Info{Name: "ads", Version: version})
	svc.register(p)
	host := &users{held: map[string][2]string{}}
	return &bundle{tp: plugintest.Start(t, p, plugintest.WithHost(host)), pool: svc.pool, host: host}
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
