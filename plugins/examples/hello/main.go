// Command hello is the example partner plugin: it adds the Graph node
// hello/{name} and the REST path GET /api/v1/hello/{name} to a running
// gateway, built on its own, without rebuilding the gateway. See README.md.
package main

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"os"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/svcplatform/svc/sdk"
	"github.com/svcplatform/svc/sdk/event"
	"github.com/svcplatform/svc/sdk/migrate"

	hellov1 "example.com/hello/gen/hello/v1"
)

// version is the plugin's version, shown in GET /api/admin/plugins.
const version = "1.0.0"

// EventWaved is the plugin's own event type. Declaring it in sdk.Info is
// all it takes for apps to subscribe to it.
const EventWaved = "hello.waved"

// migrations are the plugin's schema, hello, applied at start.
//
//go:embed sql/migrations/*.sql
var migrations embed.FS

func main() {
	files, _ := fs.Sub(migrations, "sql/migrations")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	pool, err := migrate.Open(ctx, "hello", files, 4)
	cancel()
	p := newPlugin(pool)
	if err != nil {
		p.Logger().Error("hello cannot start", "error", err)
		os.Exit(1)
	}
	p.OnHealth(func(ctx context.Context) error { return pool.Ping(ctx) })
	p.Serve()
}

// newPlugin builds the plugin on pool, its database; main serves it and
// the tests run it in-process (with no database, a wave is unavailable).
func newPlugin(pool *pgxpool.Pool) *sdk.Plugin {
	p := sdk.New(sdk.Info{Name: "hello", Version: version, Events: []string{EventWaved}})
	s := &service{pool: pool}
	methods := hellov1.File_hello_v1_hello_proto.Services().ByName("HelloService").Methods()
	sdk.Handle(p, methods.ByName("SayHello"), s.sayHello)
	sdk.Handle(p, methods.ByName("Wave"), s.wave)
	return p
}

type service struct{ pool *pgxpool.Pool }

// sayHello greets the name in the path. The gateway has already checked the
// request against hello.proto (buf.validate: 1 to 64 characters), so the
// check here only guards against a gateway configured without validation.
func (s *service) sayHello(ctx context.Context, call *sdk.Call, req *hellov1.SayHelloRequest) (*hellov1.SayHelloResponse, error) {
	name := req.GetName()
	if n := utf8.RuneCountInString(name); n == 0 || n > 64 {
		return nil, sdk.Invalid("name", "name must be 1 to 64 characters long.")
	}
	call.Logger().Debug("saying hello", "name", name, "user_id", call.Principal().UserID)
	return &hellov1.SayHelloResponse{Id: name, Message: fmt.Sprintf("Hello, %s!", name)}, nil
}

// wave records a wave of the calling app and emits hello.waved to it, in
// the same transaction: the event exists exactly when the wave does.
func (s *service) wave(ctx context.Context, call *sdk.Call, req *hellov1.WaveRequest) (*hellov1.WaveResponse, error) {
	if s.pool == nil {
		return nil, sdk.Unavailable("Waving")
	}
	app := call.Principal().AppID
	var id string
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var err error
		id, err = event.Emit(ctx, tx, event.Event{Type: EventWaved, AppID: app,
			Data: map[string]string{"name": req.GetName(), "message": "👋 " + req.GetName()}})
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `INSERT INTO hello.waves (app_id, name, event_id) VALUES ($1, $2, $3)`, app, req.GetName(), id)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &hellov1.WaveResponse{Id: id}, nil
}
