package main

import (
	"context"
	"errors"
	"io/fs"
	"slices"
	"testing"

	"github.com/svcplatform/svc/sdk"
	"github.com/svcplatform/svc/sdk/plugintest"

	hellov1 "example.com/hello/gen/hello/v1"
)

// The procedures of HelloService.
const (
	sayHello = "/hello.v1.HelloService/SayHello"
	wave     = "/hello.v1.HelloService/Wave"
)

func TestMain(m *testing.M) {
	files, _ := fs.Sub(migrations, "sql/migrations")
	plugintest.Main(m, "hello", files)
}

// A wave is stored with its event, in one transaction, and the event goes
// to the app that waved.
func TestAWaveIsStoredWithItsEventForTheCallingApp(t *testing.T) {
	pool := plugintest.Database(t)
	p := plugintest.Start(t, newPlugin(pool))
	res, err := plugintest.CallT[*hellov1.WaveResponse](t, p, wave,
		sdk.Principal{Kind: sdk.TokenKindAppKey, AppID: "42"}, &hellov1.WaveRequest{Name: "Ada"})
	if err != nil {
		t.Fatal(err)
	}
	if n := plugintest.Count(t, pool, `SELECT count(*) FROM hello.waves WHERE app_id = '42' AND name = 'Ada' AND event_id = $1`, res.GetId()); n != 1 {
		t.Fatalf("%d waves stored with event %s, want 1", n, res.GetId())
	}
	if n := plugintest.Count(t, pool, `SELECT count(*) FROM core.outbox WHERE id = $1 AND type = 'hello.waved' AND app_id = '42'`, res.GetId()); n != 1 {
		t.Fatalf("%d events %s in the outbox, want 1", n, res.GetId())
	}
}

func TestSayHelloGreetsTheNameInThePath(t *testing.T) {
	p := plugintest.Start(t, newPlugin(nil))
	res, err := plugintest.Call[*hellov1.SayHelloResponse](context.Background(), p,
		sayHello, sdk.Principal{}, &hellov1.SayHelloRequest{Name: "Ada"})
	if err != nil {
		t.Fatal(err)
	}
	if res.GetId() != "Ada" || res.GetMessage() != "Hello, Ada!" {
		t.Fatalf("answer = %v", res)
	}
}

func TestAnEmptyNameIsRefusedNamingTheField(t *testing.T) {
	p := plugintest.Start(t, newPlugin(nil))
	_, err := plugintest.Call[*hellov1.SayHelloResponse](context.Background(), p,
		sayHello, sdk.Principal{}, &hellov1.SayHelloRequest{})
	var e *sdk.Error
	if !errors.As(err, &e) || e.HTTPStatus != 400 || e.Code != 100 || e.Field != "name" {
		t.Fatalf("error = %v", err)
	}
}

// The manifest follows the rules the gateway applies when it loads the
// plugin (the platform's manifestcheck, which the gateway uses too), and binds
// the plugin's Graph nodes. The REST path is the transcoder's; the e2e
// tests call it on a running gateway.
func TestTheManifestFollowsTheGatewaysRulesAndBindsTheGraphNodes(t *testing.T) {
	p := plugintest.Start(t, newPlugin(nil))
	got := plugintest.CheckManifest(t, p)
	want := []string{
		"GET hello/{name}", "RPC /hello.v1.HelloService/SayHello",
		"POST hello/{name}/waves", "RPC /hello.v1.HelloService/Wave",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("bindings = %q, want %q", got, want)
	}
}
