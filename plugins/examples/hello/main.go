// Command hello is the example partner plugin: it adds the Graph node
// hello/{name} and the REST path GET /api/v1/hello/{name} to a running
// gateway, built on its own, without rebuilding the gateway. See README.md.
package main

import (
	"context"
	"fmt"
	"unicode/utf8"

	hellov1 "github.com/svcplatform/svc/gen/svc/hello/v1"
	"github.com/svcplatform/svc/plugins/sdk"
)

// version is the plugin's version, shown in GET /api/admin/plugins.
const version = "1.0.0"

func main() {
	newPlugin().Serve()
}

// newPlugin builds the plugin; main serves it and the tests run it
// in-process.
func newPlugin() *sdk.Plugin {
	p := sdk.New(sdk.Info{Name: "hello", Version: version})
	sdk.Unary(p, hellov1.HelloService_SayHello_FullMethodName, sayHello)
	return p
}

// sayHello greets the name in the path. The gateway has already checked the
// request against hello.proto (buf.validate: 1 to 64 characters), so the
// check here only guards against a gateway configured without validation.
func sayHello(ctx context.Context, call *sdk.Call, req *hellov1.SayHelloRequest) (*hellov1.SayHelloResponse, error) {
	name := req.GetName()
	if n := utf8.RuneCountInString(name); n == 0 || n > 64 {
		return nil, sdk.Invalid("name", "name must be 1 to 64 characters long.")
	}
	call.Logger().Debug("saying hello", "name", name, "user_id", call.Principal().UserID)
	return &hellov1.SayHelloResponse{Id: name, Message: fmt.Sprintf("Hello, %s!", name)}, nil
}
