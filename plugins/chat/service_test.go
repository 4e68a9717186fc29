package main

import (
	"context"
	"slices"
	"strconv"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	adsv1 "github.com/svcplatform/svc/gen/svc/ads/v1"
	chatv1 "github.com/svcplatform/svc/gen/svc/chat/v1"
	svcchatv1 "github.com/svcplatform/svc/gen/svc/svcchat/v1"
	"github.com/svcplatform/svc/internal/readpool"
	chatsql "github.com/svcplatform/svc/plugins/chat/sql"
	"github.com/svcplatform/svc/sdk"
	"github.com/svcplatform/svc/sdk/plugintest"
)

func TestMain(m *testing.M) { plugintest.Main(m, "chat", chatsql.Migrations()) }

// svcchatInbox is the Host of these tests: Host.Call answers svcchat's
// Inbox with one Page thread, as the caller it is given.
type svcchatInbox struct {
	plugintest.NoHost
	updatedAt string
	// adFor is the one user the ads plugin serves an ad; to anyone else it
	// is unavailable, which leaves the slot empty.
	adFor string
}

// UserInfo knows users 900 to 902.
func (h *svcchatInbox) UserInfo(_ context.Context, userID string) (*sdk.UserInfo, error) {
	switch userID {
	case "900", "901", "902":
		return &sdk.UserInfo{Exists: true, Name: "User " + userID}, nil
	}
	return &sdk.UserInfo{}, nil
}

func (h *svcchatInbox) Call(_ context.Context, c plugintest.HostCall) ([]byte, error) {
	if c.Procedure == serveAdProcedure && c.Caller.Kind == sdk.TokenKindSession && h.adFor == c.Caller.UserID {
		return proto.Marshal(&adsv1.SponsoredAd{AdId: "8600000001", Title: "Demo Coffee beans, 20% off", LinkUrl: "https://example.com/demo-coffee"})
	}
	if c.Procedure != inboxProcedure || c.Caller.Kind == sdk.TokenKindPlugin {
		return nil, sdk.Unavailable("svcchat")
	}
	out, _ := proto.Marshal(&svcchatv1.InboxResponse{Threads: []*svcchatv1.InboxThread{{ConversationId: "2000000001", PageId: "500",
		PageName: "Demo Coffee", ControlHolder: "svc_ai", UpdatedAt: h.updatedAt, DeepLink: "svcchat://page-inbox/500/2000000001",
		LastMessage: &svcchatv1.ThreadMessageSummary{Text: "Hello", SenderLabel: "Demo Coffee · Assistant", CreatedAt: h.updatedAt}}}})
	return out, nil
}

type bundle struct {
	tp   *plugintest.Plugin
	pool *pgxpool.Pool
}

func setup(t *testing.T) *bundle {
	t.Helper()
	pool := plugintest.Database(t)
	p := sdk.New(info)
	(&service{pool: pool, db: readpool.PrimaryOnly(pool)}).register(p)
	return &bundle{tp: plugintest.Start(t, p, plugintest.WithHost(&svcchatInbox{updatedAt: "2000-01-01T00:00:00Z", adFor: "901"})), pool: pool}
}

func session(user string) sdk.Principal {
	return sdk.Principal{Kind: sdk.TokenKindSession, UserID: user}
}

func call[Res proto.Message](t *testing.T, b *bundle, method string, p sdk.Principal, req proto.Message) (Res, error) {
	t.Helper()
	return plugintest.Call[Res](context.Background(), b.tp, "/svc.chat.v1.ChatService/"+method, p, req)
}

func TestTheChatsListMergesDirectAndPageThreadsNewestFirst(t *testing.T) {
	t.Parallel()
	b := setup(t)
	dm, err := call[*chatv1.SendDirectMessageResponse](t, b, "SendDirectMessage", session("901"), &chatv1.SendDirectMessageRequest{ToUserId: "900", Text: "Coffee later?"})
	if err != nil || dm.GetThreadId() == "" || dm.GetMessageId() == "" {
		t.Fatalf("send = %v, %v", dm, err)
	}
	again, _ := call[*chatv1.SendDirectMessageResponse](t, b, "SendDirectMessage", session("900"), &chatv1.SendDirectMessageRequest{ToUserId: "901", Text: "Sure"})
	if again.GetThreadId() != dm.GetThreadId() {
		t.Fatalf("the reply opened thread %s, not %s", again.GetThreadId(), dm.GetThreadId())
	}
	list, err := call[*structpb.Struct](t, b, "ListChats", session("900"), &chatv1.ListChatsRequest{View: "list"})
	if err != nil {
		t.Fatal(err)
	}
	threads := list.GetFields()["threads"].GetListValue().GetValues()
	if len(threads) != 2 {
		t.Fatalf("list = %v", list)
	}
	first, second := threads[0].GetStructValue().GetFields(), threads[1].GetStructValue().GetFields()
	if first["kind"].GetStringValue() != "direct" || first["withUserId"].GetStringValue() != "901" || first["withUserName"].GetStringValue() != "User 901" ||
		first["lastMessage"].GetStructValue().GetFields()["senderLabel"].GetStringValue() != "You" ||
		second["kind"].GetStringValue() != "page" || second["deepLink"].GetStringValue() != "svcchat://page-inbox/500/2000000001" {
		t.Fatalf("list = %v", list)
	}
	if _, ok := list.GetFields()["sponsoredAd"].GetKind().(*structpb.Value_NullValue); !ok {
		t.Fatalf("sponsoredAd without any = %v", list.GetFields()["sponsoredAd"])
	}

	t.Run("folders group the same threads and carry the sponsored item the ads plugin serves", func(t *testing.T) {
		f, err := call[*structpb.Struct](t, b, "ListChats", session("901"), &chatv1.ListChatsRequest{View: "folders"})
		if err != nil {
			t.Fatal(err)
		}
		folders := f.GetFields()["folders"].GetListValue().GetValues()
		if len(folders) != 2 || folders[0].GetStructValue().GetFields()["name"].GetStringValue() != "Direct" ||
			len(folders[1].GetStructValue().GetFields()["threads"].GetListValue().GetValues()) != 1 ||
			f.GetFields()["sponsoredAd"].GetStructValue().GetFields()["adId"].GetStringValue() != "8600000001" {
			t.Fatalf("folders = %v", f)
		}
	})
	t.Run("a third user sees no one else's direct thread", func(t *testing.T) {
		l, err := call[*structpb.Struct](t, b, "ListChats", session("902"), &chatv1.ListChatsRequest{})
		if err != nil || len(l.GetFields()["threads"].GetListValue().GetValues()) != 1 {
			t.Fatalf("list = %v, %v", l, err)
		}
	})
}

func TestChatRefusals(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, err := call[*chatv1.SendDirectMessageResponse](t, b, "SendDirectMessage", session("900"), &chatv1.SendDirectMessageRequest{ToUserId: "900", Text: "me"})
	wantInvalid(t, err, "toUserId")
	_, err = call[*structpb.Struct](t, b, "ListChats", session("900"), &chatv1.ListChatsRequest{View: "grid"})
	wantInvalid(t, err, "view")
	t.Run("a direct message to a user id that names nobody is refused with 2018309, telling nothing of who exists", func(t *testing.T) {
		_, err := call[*chatv1.SendDirectMessageResponse](t, b, "SendDirectMessage", session("900"), &chatv1.SendDirectMessageRequest{ToUserId: "no-one", Text: "hi"})
		e, ok := err.(*sdk.Error)
		if !ok || e.HTTPStatus != 403 || e.Code != 10 || e.Subcode != 2018309 {
			t.Fatalf("err = %v; want 403/10/2018309", err)
		}
		var n int
		if err := b.pool.QueryRow(context.Background(), "SELECT count(*) FROM chat.direct_threads").Scan(&n); err != nil || n != 0 {
			t.Fatalf("%d threads, %v", n, err)
		}
	})
}

func wantInvalid(t *testing.T, err error, field string) {
	t.Helper()
	e, ok := err.(*sdk.Error)
	if !ok || e.HTTPStatus != 400 || e.Code != 100 || e.Field != field {
		t.Fatalf("err = %v; want 400/100 naming %s", err, field)
	}
}

func TestADirectThreadReadsInPagesOldestFirstForItsTwoUsersOnly(t *testing.T) {
	t.Parallel()
	b := setup(t)
	var threadID string
	var ids []string
	for i, from := range []string{"900", "901", "900", "901", "900"} {
		to := map[string]string{"900": "901", "901": "900"}[from]
		r, err := call[*chatv1.SendDirectMessageResponse](t, b, "SendDirectMessage", session(from), &chatv1.SendDirectMessageRequest{ToUserId: to, Text: "m" + strconv.Itoa(i)})
		if err != nil {
			t.Fatal(err)
		}
		threadID, ids = r.GetThreadId(), append(ids, r.GetMessageId())
	}
	th, err := call[*chatv1.DirectThread](t, b, "GetDirectThread", session("901"), &chatv1.GetDirectThreadRequest{ThreadId: threadID, Limit: 3})
	if err != nil {
		t.Fatal(err)
	}
	texts := func(th *chatv1.DirectThread) (out []string) {
		for _, m := range th.GetMessages() {
			out = append(out, m.GetSenderLabel()+":"+m.GetText())
		}
		return out
	}
	if got := texts(th); !slices.Equal(got, []string{"User 900:m2", "You:m3", "User 900:m4"}) || !th.GetHasOlder() || th.GetWithUserId() != "900" || th.GetWithUserName() != "User 900" {
		t.Fatalf("newest page = %v (has older %v, with %s %q)", got, th.GetHasOlder(), th.GetWithUserId(), th.GetWithUserName())
	}
	older, err := call[*chatv1.DirectThread](t, b, "GetDirectThread", session("901"), &chatv1.GetDirectThreadRequest{ThreadId: threadID, Limit: 3, Before: th.GetMessages()[0].GetId()})
	if err != nil {
		t.Fatal(err)
	}
	if got := texts(older); !slices.Equal(got, []string{"User 900:m0", "You:m1"}) || older.GetHasOlder() || older.GetMessages()[0].GetId() != ids[0] {
		t.Fatalf("older page = %v (has older %v)", got, older.GetHasOlder())
	}

	t.Run("someone else's thread, a malformed id and a missing one are the same 404", func(t *testing.T) {
		for _, c := range []struct{ user, id string }{{"902", threadID}, {"900", "not-a-number"}, {"900", "4999999999"}} {
			_, err := call[*chatv1.DirectThread](t, b, "GetDirectThread", session(c.user), &chatv1.GetDirectThreadRequest{ThreadId: c.id})
			e, ok := err.(*sdk.Error)
			if !ok || e.HTTPStatus != 404 || e.Code != 100 || e.Subcode != 33 {
				t.Fatalf("user %s thread %q: err = %v; want 404/100/33", c.user, c.id, err)
			}
		}
	})
	t.Run("before must name a message of the thread", func(t *testing.T) {
		_, err := call[*chatv1.DirectThread](t, b, "GetDirectThread", session("900"), &chatv1.GetDirectThreadRequest{ThreadId: threadID, Before: "dm_other"})
		wantInvalid(t, err, "before")
	})
}
