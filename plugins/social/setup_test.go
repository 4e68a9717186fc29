package main

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"google.golang.org/protobuf/proto"

	socialsql "github.com/svcplatform/svc/plugins/social/sql"
	"github.com/svcplatform/svc/sdk"
	"github.com/svcplatform/svc/sdk/plugintest"
)

func TestMain(m *testing.M) { plugintest.Main(m, "social", socialsql.Migrations()) }

const (
	author = "1000000001"
	reader = "1000000002"
	appID  = "2000000001"
	pageID = "3000000001"
	// linkedApp is an app linked to the Page: its users' tokens see the
	// Page's reels.
	linkedApp = "2000000002"

	procCreateThread   = "/svc.social.v1.ThreadsService/CreateThread"
	procGetThread      = "/svc.social.v1.ThreadsService/GetThread"
	procCreateReply    = "/svc.social.v1.ThreadsService/CreateReply"
	procListReplies    = "/svc.social.v1.ThreadsService/ListReplies"
	procLikeThread     = "/svc.social.v1.ThreadsService/LikeThread"
	procThreadInsights = "/svc.social.v1.ThreadsService/GetThreadInsights"
	procCreateReel     = "/svc.social.v1.ReelsService/CreateReel"
	procGetReel        = "/svc.social.v1.ReelsService/GetReel"
	procReelInsights   = "/svc.social.v1.ReelsService/GetReelInsights"
	procLikeReel       = "/svc.social.v1.ReelsService/LikeReel"
	procReplyToReel    = "/svc.social.v1.ReelsService/CreateReelReply"
	procReelReplies    = "/svc.social.v1.ReelsService/ListReelReplies"
)

func user(id string) sdk.Principal {
	return sdk.Principal{Kind: sdk.TokenKindUser, UserID: id, AppID: appID,
		Scopes: []string{"threads_basic", "threads_content_publish", "threads_manage_insights", "pages:read", "pages:manage"}}
}

// throughLinkedApp is user id's token issued to the app linked to the Page.
func throughLinkedApp(id string) sdk.Principal {
	p := user(id)
	p.AppID = linkedApp
	return p
}

type bundle struct {
	tp   *plugintest.Plugin
	svc  *service
	pool *pgxpool.Pool
}

// setup runs the plugin in-process on a fresh database. The reel checker
// does not run by itself: tests drive it with checkOne.
func setup(t testing.TB, opts Options) *bundle {
	t.Helper()
	pool := plugintest.Database(t)
	p := sdk.New(sdk.Info{Name: "social", Version: version, Events: []string{EventThreadCreated, EventReelReady}})
	svc := newService(pool, opts, p.Logger())
	svc.register(p)
	return &bundle{tp: plugintest.Start(t, p, plugintest.WithHost(plugintest.OnePage{PageID: pageID, Admins: []string{author}, LinkedApps: []string{linkedApp}})), svc: svc, pool: pool}
}

func ctxFor(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func call[T proto.Message](t testing.TB, b *bundle, proc string, who sdk.Principal, req proto.Message) (T, error) {
	t.Helper()
	return plugintest.CallT[T](t, b.tp, proc, who, req)
}
