package main

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	wearablesv1 "github.com/svcplatform/svc/gen/svc/wearables/v1"
	"github.com/svcplatform/svc/internal/pgtest"
	wearablessql "github.com/svcplatform/svc/plugins/wearables/sql"
	"github.com/svcplatform/svc/sdk"
	"github.com/svcplatform/svc/sdk/migrate"
	"github.com/svcplatform/svc/sdk/plugintest"
	coresql "github.com/svcplatform/svc/sql/core"
)

func TestMain(m *testing.M) {
	// The outbox lives in the core schema: migrate it beside ours.
	name := pgtest.TemplateName("svc_wearables", coresql.Migrations(), wearablessql.Migrations())
	pgtest.RegisterTemplate(name, func(ctx context.Context, url string) error {
		pool, err := pgxpool.New(ctx, url)
		if err != nil {
			return err
		}
		defer pool.Close()
		if _, err := migrate.Apply(ctx, pool, "core", coresql.Migrations()); err != nil {
			return err
		}
		_, err = migrate.Apply(ctx, pool, "wearables", wearablessql.Migrations())
		return err
	})
	pgtest.Main(m)
}

const (
	procPush    = "/svc.wearables.v1.WearablesService/PushCard"
	procConfirm = "/svc.wearables.v1.WearablesService/ConfirmAction"
	procStream  = "/svc.wearables.v1.DeviceService/StreamCards"
	procAck     = "/svc.wearables.v1.DeviceService/AckCard"

	wearer = "1000000001"
	other  = "1000000002"
	appID  = "2000000001"
)

// app is the wearer's user token through the app; device is the wearer's
// first-party session (the glasses app).
var (
	app = sdk.Principal{Kind: sdk.TokenKindUser, UserID: wearer, AppID: appID,
		Scopes: []string{"wearables:push"}}
	device      = sdk.Principal{Kind: sdk.TokenKindSession, UserID: wearer}
	otherDevice = sdk.Principal{Kind: sdk.TokenKindSession, UserID: other}
)

// bundle is one plugin under test with its database.
type bundle struct {
	tp   *plugintest.Plugin
	svc  *service
	pool *pgxpool.Pool
}

// setup runs the plugin in-process on a fresh database, with its
// background keeper.
func setup(t testing.TB, opts Options) *bundle {
	t.Helper()
	pool := pgtest.Pool(t, pgtest.NewDatabase(t))
	p := sdk.New(sdk.Info{Name: "wearables", Version: version, Events: []string{EventCardDelivered, EventActionConfirmed}})
	svc := newService(pool, opts, p.Logger())
	svc.register(p)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); svc.runKeeper(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return &bundle{tp: plugintest.Start(t, p), svc: svc, pool: pool}
}

func ctxFor(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func card(actions ...string) *wearablesv1.CardContent {
	c := &wearablesv1.CardContent{Title: "Coffee is ready", Body: "Your flat white is at the counter."}
	for _, a := range actions {
		c.Actions = append(c.Actions, &wearablesv1.CardAction{Id: a, Label: "Label " + a})
	}
	return c
}

func (b *bundle) push(t testing.TB, actions ...string) string {
	t.Helper()
	res, err := plugintest.Call[*wearablesv1.PushCardResponse](ctxFor(t), b.tp, procPush, app,
		&wearablesv1.PushCardRequest{UserId: wearer, Card: card(actions...)})
	if err != nil {
		t.Fatalf("push: %v", err)
	}
	if res.GetStatus() != "queued" || res.GetCardId() == "" {
		t.Fatalf("push answered %v", res)
	}
	return res.GetCardId()
}

func (b *bundle) ack(t testing.TB, who sdk.Principal, cardID string) (*wearablesv1.AckCardResponse, error) {
	t.Helper()
	return plugintest.Call[*wearablesv1.AckCardResponse](ctxFor(t), b.tp, procAck, who, &wearablesv1.AckCardRequest{CardId: cardID})
}

func (b *bundle) confirm(t testing.TB, who sdk.Principal, cardID, action string) (*wearablesv1.ConfirmActionResponse, error) {
	t.Helper()
	return plugintest.Call[*wearablesv1.ConfirmActionResponse](ctxFor(t), b.tp, procConfirm, who,
		&wearablesv1.ConfirmActionRequest{CardId: cardID, ActionId: action})
}

// deviceStream is an open StreamCards call.
type deviceStream struct {
	msgs   chan *wearablesv1.StreamCardsResponse
	cancel context.CancelFunc
	done   chan struct{} // closed when the call returned, with err set
	err    error
}

// connect opens StreamCards as who and waits for its Connected message.
func (b *bundle) connect(t testing.TB, who sdk.Principal) (*deviceStream, string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	s := &deviceStream{msgs: make(chan *wearablesv1.StreamCardsResponse, 256), cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		s.err = plugintest.Stream(ctx, b.tp, procStream, who, &wearablesv1.StreamCardsRequest{}, func(m *wearablesv1.StreamCardsResponse) error {
			s.msgs <- m
			return nil
		})
	}()
	t.Cleanup(s.close)
	first := s.next(t)
	if first.GetConnected().GetDeviceId() == "" {
		t.Fatalf("first stream message is %v, want connected", first)
	}
	return s, first.GetConnected().GetDeviceId()
}

func (s *deviceStream) next(t testing.TB) *wearablesv1.StreamCardsResponse {
	t.Helper()
	select {
	case m := <-s.msgs:
		return m
	case <-s.done:
		t.Fatalf("the stream ended: %v", s.err)
	case <-time.After(20 * time.Second):
		t.Fatal("no stream message within 20 s")
	}
	return nil
}

func (s *deviceStream) close() {
	s.cancel()
	<-s.done
}

// events are the outbox rows of one type, oldest first.
type outboxEvent struct {
	AppID *string
	Data  map[string]string
}

func (b *bundle) events(t testing.TB, typ string) []outboxEvent {
	t.Helper()
	rows, err := b.pool.Query(ctxFor(t), `SELECT app_id, data FROM core.outbox WHERE type = $1 ORDER BY seq`, typ)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []outboxEvent
	for rows.Next() {
		var e outboxEvent
		var raw []byte
		if err := rows.Scan(&e.AppID, &raw); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(raw, &e.Data); err != nil {
			t.Fatal(err)
		}
		out = append(out, e)
	}
	return out
}

func (b *bundle) status(t testing.TB, cardID string) string {
	t.Helper()
	var s string
	if err := b.pool.QueryRow(ctxFor(t), `SELECT status FROM wearables.cards WHERE id = $1::bigint`, cardID).Scan(&s); err != nil {
		t.Fatal(err)
	}
	return s
}

// waitStatus waits until the background work moved a card to want.
func (b *bundle) waitStatus(t testing.TB, cardID, want string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for b.status(t, cardID) != want {
		if time.Now().After(deadline) {
			t.Fatalf("card %s is %s, want %s", cardID, b.status(t, cardID), want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// wantRefusal checks err is the *sdk.Error with these numbers.
