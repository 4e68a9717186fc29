// Command hello is the example partner plugin: it adds the Graph node
// hello/{name} and the REST path GET /api/v1/hello/{name} to a running
// gateway, built on its own, without rebuilding the gateway. See README.md.
package main

import (
	"context"
	"fmt"
	"os"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	hellov1 "github.com/svcplatform/svc/gen/svc/hello/v1"
	"github.com/svcplatform/svc/sdk"
	"github.com/svcplatform/svc/sdk/event"
)

// version is the plugin's version, shown in GET /api/admin/plugins.
const version = "1.0.0"

// EventWaved is the plugin's own event type. Declaring it in sdk.Info is
// all it takes for apps to subscribe to it.
const EventWaved = "hello.waved"

func main() {
	p := newPlugin()
	if url := os.Getenv("SVC_DATABASE_URL"); url != "" {
		// Events are written in the outbox of the gateway's database, in the
		// transaction of the change they report (here there is nothing else
		// to write).
		pool, err := pgxpool.New(context.Background(), url)
		if err != nil {
			p.Logger().Error("hello cannot reach PostgreSQL", "error", err)
			os.Exit(1)
		}
		waves.pool = pool
	}
	p.Serve()
}

// newPlugin builds the plugin; main serves it and the tests run it
// in-process.
func newPlugin() *sdk.Plugin {
	p := sdk.New(sdk.Info{Name: "hello", Version: version, Events: []string{EventWaved}})
	methods := hellov1.File_svc_hello_v1_hello_proto.Services().ByName("HelloService").Methods()
	sdk.Handle(p, methods.ByName("SayHello"), sayHello)
	sdk.Handle(p, methods.ByName("Wave"), waves.wave)
	return p
}

// waver emits hello.waved; pool is nil when the plugin runs without a
// database (its unit tests).
type waver struct{ pool *pgxpool.Pool }

var waves waver

// wave emits hello.waved to the calling app, in its own transaction.
func (w *waver) wave(ctx context.Context, call *sdk.Call, req *hellov1.WaveRequest) (*hellov1.WaveResponse, error) {
	if w.pool == nil {
		return nil, sdk.Unavailable("Waving")
	}
	var id string
	err := pgx.BeginFunc(ctx, w.pool, func(tx pgx.Tx) error {
		var err error
		id, err = event.Emit(ctx, tx, event.Event{Type: EventWaved, AppID: call.Principal().AppID,
			Data: map[string]string{"name": req.GetName(), "message": "👋 " + req.GetName()}})
		return err
	})
	if err != nil {
		return nil, err
	}
	return &hellov1.WaveResponse{Id: id}, nil
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
