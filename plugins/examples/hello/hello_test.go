package main

import (
	"context"
	"errors"
	"slices"
	"testing"

	hellov1 "github.com/svcplatform/svc/gen/svc/hello/v1"
	"github.com/svcplatform/svc/sdk"
	"github.com/svcplatform/svc/sdk/plugintest"
)

func TestSayHelloGreetsTheNameInThePath(t *testing.T) {
	p := plugintest.Start(t, newPlugin())
	res, err := plugintest.Call[*hellov1.SayHelloResponse](context.Background(), p,
		hellov1.HelloService_SayHello_FullMethodName, sdk.Principal{}, &hellov1.SayHelloRequest{Name: "Ada"})
	if err != nil {
		t.Fatal(err)
	}
	if res.GetId() != "Ada" || res.GetMessage() != "Hello, Ada!" {
		t.Fatalf("answer = %v", res)
	}
}

func TestAnEmptyNameIsRefusedNamingTheField(t *testing.T) {
	p := plugintest.Start(t, newPlugin())
	_, err := plugintest.Call[*hellov1.SayHelloResponse](context.Background(), p,
		hellov1.HelloService_SayHello_FullMethodName, sdk.Principal{}, &hellov1.SayHelloRequest{})
	var e *sdk.Error
	if !errors.As(err, &e) || e.HTTPStatus != 400 || e.Code != 100 || e.Field != "name" {
		t.Fatalf("error = %v", err)
	}
}

// The manifest follows the rules the gateway applies when it loads the
// plugin (the SDK's manifestcheck, which the gateway uses too), and binds
// the plugin's Graph nodes. The REST path is the transcoder's; the e2e
// tests call it on a running gateway.
func TestTheManifestFollowsTheGatewaysRulesAndBindsTheGraphNodes(t *testing.T) {
	p := plugintest.Start(t, newPlugin())
	got := plugintest.CheckManifest(t, p)
	want := []string{
		"GET hello/{name}", "RPC /svc.hello.v1.HelloService/SayHello",
		"POST hello/{name}/waves", "RPC /svc.hello.v1.HelloService/Wave",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("bindings = %q, want %q", got, want)
	}
}
