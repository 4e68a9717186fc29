package e2e

import (
	"bufio"
	"bytes"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/svcplatform/svc/internal/gatewaytest"
	"github.com/svcplatform/svc/internal/pgtest"
)

// Gateways keep nothing between requests that another gateway would need:
// a second and a third gateway join a running one on the same database
// and installation folder, and then
//   - a post written through any gateway is read through every other;
//   - one Idempotency-Key sent to all three makes one post, answered alike;
//   - every event is delivered to the app's webhook once, whichever
//     gateway dispatched it;
//   - the assistant answers each new conversation once, though each
//     gateway runs its own svcchat plugin;
//   - pruning runs, one gateway at a time;
//   - reloading a plugin on one gateway leaves the other two serving,
//     without a failed request.
func TestGatewaysJoiningARunningOneShareEverythingThroughTheDatabase(t *testing.T) {
	t.Parallel()
	db := pgtest.NewDatabase(t)
	// One installation (one master key, one seed), each gateway with its
	// own copy of the data folder.
	opts := gatewaytest.Options{DatabaseURL: db, DataDir: t.TempDir(),
		Args: []string{"--prune-interval", "300ms", "--retain-events", "1s", "--retain-deliveries", "1s"}}
	first := gatewaytest.Start(t, opts)
	c := first.Credentials(t)
	owner := first.UserToken(t, "owner", "pages:read", "pages:manage")
	world := func(g *gatewaytest.Gateway) *graphWorld { return &graphWorld{g: g, db: db, c: c, owner: owner} }
	grantBook(t, world(first))
	rcv := newHookReceiver(t, c.App.ClientSecret)
	if res, body := world(first).post(t, c.App.APIKey, map[string]any{"node": "app/" + c.App.ID + "/subscriptions",
		"callback_url": rcv.srv.URL + "/hook", "verify_token": hookVerifyToken,
		"events": []string{"book.post.created", "svcchat.message.sent"}}, nil); res.StatusCode != 200 {
		t.Fatalf("subscribe: %d %s", res.StatusCode, body)
	}
	var posts []string
	posts = append(posts, world(first).publish(t, "before the others joined"))

	gateways := []*gatewaytest.Gateway{first, gatewaytest.Start(t, gatewaytest.AnotherMachine(t, opts)),
		gatewaytest.Start(t, gatewaytest.AnotherMachine(t, opts))}

	// Written through one, read through every other.
	for i, g := range gateways {
		id := world(g).publish(t, fmt.Sprintf("written through gateway %d", i))
		posts = append(posts, id)
		for j, h := range gateways {
			res, body := world(h).get(t, owner, url.Values{"node": {"post/" + id}})
			if res.StatusCode != 200 || !strings.Contains(string(body), fmt.Sprintf("written through gateway %d", i)) {
				t.Errorf("post %s written through gateway %d, read through gateway %d: %d %s", id, i, j, res.StatusCode, body)
			}
		}
	}

	// One key, three gateways, one post.
	var answers []string
	for _, g := range gateways {
		res, body := world(g).post(t, owner, map[string]any{"node": "page/" + c.Page.ID + "/posts", "content": "once, by key"},
			map[string]string{"Idempotency-Key": "scale-out-key"})
		if res.StatusCode != 200 {
			t.Fatalf("keyed write: %d %s", res.StatusCode, body)
		}
		answers = append(answers, string(body))
	}
	if answers[0] != answers[1] || answers[1] != answers[2] {
		t.Errorf("one Idempotency-Key answered differently by the three gateways: %q", answers)
	}
	if n := dbCount(t, db, `SELECT count(*) FROM book.posts WHERE content = 'once, by key'`); n != 1 {
		t.Errorf("one Idempotency-Key sent to three gateways made %d posts", n)
	}
	posts = append(posts, decode[struct{ ID string }](t, []byte(answers[0])).ID)

	// The assistant answers each new conversation once: the consumer writes
	// through the second gateway, the staff user through the third.
	if res, body := world(first).post(t, owner, map[string]any{"node": "page/" + c.Page.ID, "inbox_automation": true}, nil); res.StatusCode != 200 {
		t.Fatalf("page settings: %d %s", res.StatusCode, body)
	}
	conversations := map[string]bool{}
	for i, user := range []string{"consumer", "staff"} {
		g := gateways[1+i]
		session := signInAt(t, g.URL, c.Users[user].Username, c.Users[user].Password)
		res, body := do(t, "POST", g.URL+"/api/mobile/svcchat/page-messaging/messages",
			strings.NewReader(`{"pageId":"`+c.Page.ID+`","text":"Are you open on Sunday?"}`),
			map[string]string{"Authorization": "Bearer " + session, "Content-Type": "application/json"})
		out := decode[struct{ ConversationID string }](t, body)
		if res.StatusCode != 200 || out.ConversationID == "" {
			t.Fatalf("%s writes to the Page: %d %s", user, res.StatusCode, body)
		}
		conversations[out.ConversationID] = true
	}
	for cid := range conversations {
		rcv.waitForMatch("svcchat.message.sent", func(d map[string]any) bool {
			conv, _ := d["conversation"].(map[string]any)
			return conv["id"] == cid && conv["controlHolder"] == "svc_ai"
		})
	}

	// Every event once, whichever gateway dispatched and delivered it.
	delivered, duplicated := waitDelivered(rcv, "book.post.created", "postId", posts, time.Minute)
	if delivered != len(posts) || duplicated != 0 {
		t.Errorf("of %d posts' events, %d delivered, %d duplicates", len(posts), delivered, duplicated)
	}

	// Reloading book on the first gateway while the other two serve Graph
	// reads and writes.
	stop := make(chan struct{})
	var loads []*loadFigures
	var running sync.WaitGroup
	for i, g := range gateways[1:] {
		writers := 1 - i // graphLoad's keys are the same for each load: one writes
		f, wg := graphLoad(world(g), writers, 2, 5*time.Millisecond, stop)
		loads = append(loads, f)
		running.Go(wg.Wait)
	}
	time.Sleep(300 * time.Millisecond)
	for range 2 {
		res, body := do(t, "POST", first.URL+"/api/admin/plugins/book/reload", nil, map[string]string{"Authorization": "Bearer " + c.AdminToken})
		if res.StatusCode != 200 {
			t.Fatalf("reload on the first gateway: %d %s", res.StatusCode, body)
		}
		time.Sleep(300 * time.Millisecond)
	}
	close(stop)
	running.Wait()
	requests := 0
	for i, f := range loads {
		f.mu.Lock()
		for status, n := range f.statuses {
			requests += n
			if status != 200 {
				t.Errorf("gateway %d answered %d requests with %d during the reload on the first: %v", i+1, n, status, f.odd)
			}
		}
		f.mu.Unlock()
	}
	if requests < 20 {
		t.Errorf("only %d requests ran on the other gateways during the reloads", requests)
	}
	if res, body := world(first).get(t, owner, url.Values{"node": {"post/" + posts[0]}}); res.StatusCode != 200 {
		t.Errorf("the reloaded gateway: %d %s", res.StatusCode, body)
	}

	// Pruning: each gateway tried, the advisory lock let one at a time
	// prune, and what was past its retention is gone.
	eventually(t, "events past their retention pruned",
		func() bool {
			return dbCount(t, db, `SELECT count(*) FROM core.outbox WHERE created_at < now() - interval '5 seconds'`) == 0
		})
	var rounds []string
	done := 0
	for i, g := range gateways {
		m := promValues(t, g, "svc_prune_rounds_total")
		done += int(m[`outcome="done"`])
		rounds = append(rounds, fmt.Sprintf("gateway %d: %v done, %v skipped", i, m[`outcome="done"`], m[`outcome="skipped"`]))
		if m[`outcome="done"`]+m[`outcome="skipped"`] == 0 {
			t.Errorf("gateway %d never tried to prune", i)
		}
	}
	if done == 0 {
		t.Errorf("no gateway pruned: %v", rounds)
	}
	t.Logf("FIGURES three-gateways: %d posts read across gateways, %d conversations answered once each, %d events delivered (%d duplicates), %d requests on two gateways during two reloads on the third, prune rounds %s",
		len(posts), len(conversations), delivered, duplicated, requests, strings.Join(rounds, "; "))
	if n := dbCount(t, db, `SELECT count(*) FROM svcchat.messages WHERE sender = 'svc_ai'`); n != len(conversations) {
		t.Errorf("%d assistant replies to %d new conversations, want one each", n, len(conversations))
	}
}

// promValues reads one metric family from a gateway's /metrics: the value
// of each series, keyed by its labels as written between the braces.
func promValues(t *testing.T, g *gatewaytest.Gateway, name string) map[string]float64 {
	t.Helper()
	res, body := scrape(t, g)
	if res.StatusCode != 200 {
		t.Fatalf("/metrics: %d", res.StatusCode)
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(bytes.NewReader(body))
	for sc.Scan() {
		line := sc.Text()
		rest, ok := strings.CutPrefix(line, name)
		if !ok || (rest != "" && rest[0] != '{' && rest[0] != ' ') {
			continue
		}
		labels := ""
		if strings.HasPrefix(rest, "{") {
			end := strings.Index(rest, "}")
			labels, rest = rest[1:end], rest[end+1:]
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(rest), 64)
		if err == nil {
			out[labels] = v
		}
	}
	return out
}

// /metrics shows each plugin call by procedure and outcome, the gateway's
// connection pool, and the webhook queue's lag.
func TestMetricsShowPluginCallsPoolsAndDeliveryLag(t *testing.T) {
	t.Parallel()
	w := newGraphWorld(t)
	if res, body := w.get(t, w.owner, url.Values{"node": {"page/" + w.c.Page.ID + "/posts"}}); res.StatusCode != 200 {
		t.Fatalf("read: %d %s", res.StatusCode, body)
	}
	if res, body := w.get(t, w.owner, url.Values{"node": {"post/999999999"}}); res.StatusCode != 404 {
		t.Fatalf("read of a missing post: %d %s", res.StatusCode, body)
	}
	// An endpoint that answers 503 keeps its deliveries pending.
	rcv := newHookReceiver(t, w.c.App.ClientSecret)
	grantBook(t, w)
	if res, body := w.post(t, w.c.App.APIKey, map[string]any{"node": "app/" + w.c.App.ID + "/subscriptions",
		"callback_url": rcv.srv.URL + "/hook", "verify_token": hookVerifyToken, "events": []string{"book.post.created"}}, nil); res.StatusCode != 200 {
		t.Fatalf("subscribe: %d %s", res.StatusCode, body)
	}
	rcv.mu.Lock()
	rcv.answer = func([]byte) int { return 503 }
	rcv.mu.Unlock()
	w.publish(t, "waits for its webhook")

	calls := promValues(t, w.g, "svc_plugin_call_duration_seconds_count")
	outcomes := map[string]float64{}
	for labels, n := range calls {
		if strings.Contains(labels, `plugin="book"`) {
			for _, o := range []string{"ok", "refused", "failed"} {
				if strings.Contains(labels, `outcome="`+o+`"`) {
					outcomes[o] += n
				}
			}
		}
	}
	if outcomes["ok"] < 2 || outcomes["refused"] < 1 || outcomes["failed"] != 0 {
		t.Errorf("book's calls by outcome = %v, want the read and the write ok and the missing post refused; series %v", outcomes, calls)
	}
	if acquires := promValues(t, w.g, "svc_db_pool_acquires_total")[`pool="gateway"`]; acquires == 0 {
		t.Error("svc_db_pool_acquires_total{pool=\"gateway\"} is missing or 0 after requests")
	}
	eventually(t, "the delivery pending in the lag metrics", func() bool {
		return promValues(t, w.g, "svc_webhook_pending_deliveries")[""] >= 1
	})
	if _, ok := promValues(t, w.g, "svc_webhook_due_wait_seconds")[""]; !ok {
		t.Error("svc_webhook_due_wait_seconds is missing")
	}
}
