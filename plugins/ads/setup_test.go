package main

import (
	"context"
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
	appID    = "2000000001"

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
// is called by its id.
type users struct {
	plugintest.NoHost
}

func (users) UserInfo(_ context.Context, userID string) (*sdk.UserInfo, error) {
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
	return &bundle{tp: plugintest.Start(t, p, plugintest.WithHost(users{})), pool: svc.pool}
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
