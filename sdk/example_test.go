package sdk_test

import (
	"context"
	"errors"
	"fmt"

	hellov1 "github.com/svcplatform/svc/gen/svc/hello/v1"
	"github.com/svcplatform/svc/sdk"
)

// A plugin is a name, a version, the event types it emits and one handler
// per method of its proto services, named by the method's descriptor in
// the generated Go package; main then calls p.Serve(). The gateway routes,
// validates and authorizes each call from the proto's options before the
// handler runs.
func ExampleHandle() {
	p := sdk.New(sdk.Info{Name: "hello", Version: "1.0.0", Events: []string{"hello.waved"}})
	methods := hellov1.File_svc_hello_v1_hello_proto.Services().ByName("HelloService").Methods()
	sdk.Handle(p, methods.ByName("SayHello"),
		func(ctx context.Context, call *sdk.Call, req *hellov1.SayHelloRequest) (*hellov1.SayHelloResponse, error) {
			call.Logger().InfoContext(ctx, "greeting", "name", req.GetName())
			return &hellov1.SayHelloResponse{Id: req.GetName(), Message: "Hello, " + req.GetName() + "!"}, nil
		})
	p.Serve() // in main: serves until the gateway stops the plugin
}

// A handler refuses with an *sdk.Error: the gateway answers it as is, with
// the HTTP status, code and subcode of CONTRACT §3. Any other error is an
// internal error the caller learns nothing about.
func ExampleErrorf() {
	err := sdk.Errorf(403, 10, 2018278, "This message is sent outside of allowed window.")
	fmt.Println(err)

	var e *sdk.Error
	if errors.As(fmt.Errorf("send: %w", err), &e) {
		fmt.Println(e.HTTPStatus, e.Code, e.Subcode)
	}
	// Output:
	// This message is sent outside of allowed window. (code 10/2018278)
	// 403 10 2018278
}

// The common refusals have their own constructors: a bad parameter names
// its field, and an id that names nothing, whatever its form, is not found.
func ExampleNotFound() {
	fmt.Println(sdk.Invalid("text", "Invalid parameter: text is empty."))
	e := sdk.NotFound("Post 42")
	fmt.Println(e.HTTPStatus, e.Code, e.Subcode)
	// Output:
	// Invalid parameter: text is empty. (code 100/0)
	// 404 100 33
}

// An id in a request is read with ParseID: the platform writes ids as
// positive decimals, so "007" or "+7" name nothing and are answered as not
// found, like an id that does not exist.
func ExampleParseID() {
	for _, s := range []string{"1042", "007", "+7", ""} {
		id, ok := sdk.ParseID(s)
		if !ok {
			fmt.Println(sdk.NotFound("Post " + s).HTTPStatus)
			continue
		}
		fmt.Println(sdk.FormatID(id))
	}
	// Output:
	// 1042
	// 404
	// 404
	// 404
}

// A list read pages with opaque cursors over a growing int64 key: read
// Fetch rows after (or, reversed, before) the cursor and let Page trim
// them and return their paging; paging.Set(res) fills the list response's
// paging field, which the Graph renders.
func ExamplePage() {
	rows := []int64{10, 11, 12, 13, 14, 15, 16}
	read := func(w sdk.Window) []int64 { // stands for SELECT … WHERE id > $after ORDER BY id LIMIT $fetch
		var out []int64
		for _, id := range rows {
			if id > w.After && int32(len(out)) < w.Fetch() {
				out = append(out, id)
			}
		}
		return out
	}
	key := func(id int64) int64 { return id }

	w, _ := sdk.ParseWindow(3, "", "") // limit=3, first page
	page, paging := sdk.Page(w, read(w), key)
	fmt.Println(page, paging.HasNext)

	w, _ = sdk.ParseWindow(3, paging.After, "") // the next page, from its after cursor
	page, paging = sdk.Page(w, read(w), key)
	fmt.Println(page, paging.HasNext, paging.HasPrevious)

	_, err := sdk.ParseWindow(3, "not-a-cursor", "")
	fmt.Println(err)
	// Output:
	// [10 11 12] true
	// [13 14 15] true true
	// Invalid parameter: after is not a cursor from this list. (code 100/0)
}
