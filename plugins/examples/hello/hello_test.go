package main

import (
	"context"
	"errors"
	"testing"

	"google.golang.org/genproto/googleapis/api/annotations"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"

	hellov1 "github.com/svcplatform/svc/gen/svc/hello/v1"
	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
	"github.com/svcplatform/svc/plugins/sdk"
	"github.com/svcplatform/svc/plugins/sdk/plugintest"
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

func TestTheManifestBindsTheGraphNodeAndTheRESTPath(t *testing.T) {
	m := plugintest.Start(t, newPlugin()).Manifest()
	if m.GetName() != "hello" || len(m.GetServices()) != 1 || m.GetServices()[0] != "svc.hello.v1.HelloService" {
		t.Fatalf("manifest = %s %v", m.GetName(), m.GetServices())
	}
	// Read the bindings as the gateway does: from the manifest's descriptors.
	files, err := protodesc.NewFiles(m.GetFiles())
	if err != nil {
		t.Fatal(err)
	}
	d, err := files.FindDescriptorByName("svc.hello.v1.HelloService.SayHello")
	if err != nil {
		t.Fatal(err)
	}
	opts := d.(protoreflect.MethodDescriptor).Options()
	if g := proto.GetExtension(opts, pluginv1.E_Graph).(*pluginv1.GraphRoute); g.GetGet() != "hello/{name}" {
		t.Errorf("graph route = %v", g)
	}
	if h := proto.GetExtension(opts, annotations.E_Http).(*annotations.HttpRule); h.GetGet() != "/api/v1/hello/{name}" {
		t.Errorf("REST path = %v", h)
	}
	sd := d.Parent().(protoreflect.ServiceDescriptor)
	if a := proto.GetExtension(sd.Options(), pluginv1.E_DefaultAccess).(*pluginv1.Access); !a.GetPublic() {
		t.Errorf("access = %v, want public", a)
	}
}
