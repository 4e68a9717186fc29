package e2e

import (
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/svcplatform/svc/internal/gatewaytest"
	"github.com/svcplatform/svc/internal/pgtest"
)

// people are n users who can write to the Page, by id with a session: the
// three seeded ones, then Test Users of the seeded app made by its owner.
func (w *chatWorld) people(t *testing.T, n int) map[string]string {
	t.Helper()
	out := map[string]string{w.consumerID: w.consumer, w.c.Users["owner"].ID: w.owner, w.c.Users["staff"].ID: w.staff}
	for len(out) < n {
		res, body := w.post(t, w.owner, map[string]any{"node": "app/" + w.c.App.ID + "/test_users"}, nil)
		u := decode[struct{ ID, Username, Password string }](t, body)
		if res.StatusCode != 200 || u.ID == "" {
			t.Fatalf("test user: %d %s", res.StatusCode, body)
		}
		out[u.ID] = signInAt(t, w.g.URL, u.Username, u.Password)
	}
	return out
}

// writeAs is a user writing to the Page through w's gateway; it answers
// the conversation id.
func (w *chatWorld) writeAs(t *testing.T, session, text string) string {
	t.Helper()
	res, body := w.mobile(t, session, "messages", map[string]any{"pageId": w.c.Page.ID, "text": text})
	out := decode[struct{ ConversationID string }](t, body)
	if res.StatusCode != 200 || out.ConversationID == "" {
		t.Errorf("write: %d %s", res.StatusCode, body)
	}
	return out.ConversationID
}

// Two gateways on one database each run svcchat's expirer; handovers of
// several conversations lapse at the same moment, and each conversation
// gets exactly one "expire": one svcchat.handover delivered, one history
// row, control back once.
func TestAHandoverExpiresOnceAcrossTwoGateways(t *testing.T) {
	t.Parallel()
	db := pgtest.NewDatabase(t)
	opts := gatewaytest.Options{DatabaseURL: db, DataDir: t.TempDir(), Env: []string{"SVC_SVCCHAT_TEST_MIN_EXPIRES_IN=2"}}
	first := gatewaytest.Start(t, opts)
	w := &chatWorld{graphWorld: &graphWorld{g: first, db: db, c: first.Credentials(t)}}
	w.consumerID = w.c.Users["consumer"].ID
	w.consumer, w.owner, w.staff = signIn(t, w.graphWorld, "consumer"), signIn(t, w.graphWorld, "owner"), signIn(t, w.graphWorld, "staff")
	w.app = appToken(t, w.graphWorld, "svcchat:send svcchat:read")
	rcv := newHookReceiver(t, w.c.App.ClientSecret)
	if res, body := w.post(t, w.c.App.APIKey, map[string]any{"node": "app/" + w.c.App.ID + "/subscriptions",
		"callback_url": rcv.srv.URL + "/hook", "events": []string{"svcchat.handover"}, "verify_token": hookVerifyToken}, nil); res.StatusCode != 200 {
		t.Fatalf("subscribe: %d %s", res.StatusCode, body)
	}
	second := gatewaytest.Start(t, gatewaytest.AnotherMachine(t, opts))
	worlds := []*chatWorld{w, {graphWorld: &graphWorld{g: second, db: db, c: w.c}, consumerID: w.consumerID,
		consumer: w.consumer, owner: w.owner, staff: w.staff, app: w.app}}

	people := w.people(t, 6)
	var cids []string
	i := 0
	for _, session := range people {
		cids = append(cids, worlds[i%2].writeAs(t, session, "hello"))
		i++
	}
	// Every take through alternating gateways, as close together as the
	// calls allow, so that the expiries lapse together.
	var wg sync.WaitGroup
	for i, cid := range cids {
		wg.Go(func() {
			res, body := worlds[i%2].handover(t, cid, map[string]any{"action": "take_thread_control", "expires_in": 2})
			if res.StatusCode != 200 {
				t.Errorf("take: %d %s", res.StatusCode, body)
			}
		})
	}
	wg.Wait()

	expires := func(cid string) int {
		n := 0
		for _, d := range rcv.all("svcchat.handover") {
			if d.body.Data["conversationId"] == cid && d.body.Data["action"] == "expire" {
				n++
			}
		}
		return n
	}
	for _, cid := range cids {
		waitUntil(t, 30*time.Second, "conversation "+cid+" expired", func() bool { return expires(cid) >= 1 })
	}
	time.Sleep(3 * time.Second) // three more polls of each expirer
	for i, cid := range cids {
		if n := expires(cid); n != 1 {
			t.Errorf("conversation %s: %d expire events delivered, want 1", cid, n)
		}
		res, body := worlds[(i+1)%2].get(t, w.app, url.Values{"node": {"page/" + w.c.Page.ID + "/conversations/" + cid + "/handovers"}})
		list := decode[struct{ Data []struct{ Action string } }](t, body)
		if res.StatusCode != 200 || len(list.Data) != 2 || list.Data[0].Action != "expire" || list.Data[1].Action != "take_thread_control" {
			t.Errorf("handovers of %s: %d %s", cid, res.StatusCode, body)
		}
	}
	if n := dbCount(t, db, "SELECT count(*) FROM svcchat.handovers WHERE action = 'expire'"); n != len(cids) {
		t.Errorf("%d expire rows for %d conversations", n, len(cids))
	}
}
