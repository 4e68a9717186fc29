package graph

import (
	"encoding/json"
	"net/url"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/svcplatform/svc/gateway/internal/apierr"
	svcchatv1 "github.com/svcplatform/svc/gen/svc/svcchat/v1"
	webhookv1 "github.com/svcplatform/svc/gen/svc/webhook/v1"
)

// TestFormBodyBindsAsItsJSONBody checks CONTRACT §20's form-encoded
// writes: a form binds to the message its JSON body binds to (nested
// values as JSON text, scalars as their text), and is refused where the
// JSON body is, naming the same field with the same message.
func TestFormBodyBindsAsItsJSONBody(t *testing.T) {
	t.Parallel()
	subscription := (&webhookv1.SaveSubscriptionRequest{}).ProtoReflect().Descriptor()
	message := (&svcchatv1.SendMessageRequest{}).ProtoReflect().Descriptor()
	list := (&svcchatv1.ListHandoversRequest{}).ProtoReflect().Descriptor()
	cases := []struct {
		md         protoreflect.MessageDescriptor
		form, json string
	}{
		{createPost, "content=Hello+world&audience=followers", `{"content":"Hello world","audience":"followers"}`},
		{createPost, "node=page%2F7%2Fposts&content=%7B%22not%22%3A%22json%22%7D", `{"node":"page/7/posts","content":"{\"not\":\"json\"}"}`},
		{createPost, "content=5", `{"content":"5"}`},
		{createPost, "content=hi&page_id=7", `{"content":"hi","page_id":"7"}`},
		{subscription, `callback_url=https%3A%2F%2Fexample.com%2Fhook&events=%5B%22book.post.created%22%2C%22svcchat.message%22%5D&verify_token=t`,
			`{"callback_url":"https://example.com/hook","events":["book.post.created","svcchat.message"],"verify_token":"t"}`},
		{message, `recipient_user_id=42&text=hi&templateParams=%7B%22name%22%3A%22Ann%22%7D`, `{"recipient_user_id":"42","text":"hi","templateParams":{"name":"Ann"}}`},
		{list, "limit=5", `{"limit":5}`},
		// Refusals: the same field, the same words.
		{createPost, "content=hi&colour=red", `{"content":"hi","colour":"red"}`},
		{createPost, "page_id=8&content=x", `{"page_id":"8","content":"x"}`},
		{subscription, "events=book.post.created", `{"events":"book.post.created"}`},
		{subscription, "events=%5B1%5D", `{"events":[1]}`},
		{list, "limit=five", `{"limit":"five"}`},
		{message, "templateParams=Ann", `{"templateParams":"Ann"}`},
	}
	for _, c := range cases {
		vars := pageVars(t, "7")
		form, err := url.ParseQuery(c.form)
		if err != nil {
			t.Fatal(err)
		}
		var b writeBody
		if err := b.useForm(form); err != nil {
			t.Fatalf("%s: %v", c.form, err)
		}
		fromForm := dynamicpb.NewMessage(c.md)
		formErr := b.bind(fromForm, vars)
		var fields map[string]json.RawMessage
		if err := json.Unmarshal([]byte(c.json), &fields); err != nil {
			t.Fatal(err)
		}
		fromJSON := dynamicpb.NewMessage(c.md)
		jsonErr := bindBody(fromJSON, fields, vars)
		if jsonErr != nil || formErr != nil {
			fe, _ := apierr.As(formErr)
			je, _ := apierr.As(jsonErr)
			if fe == nil || je == nil || fe.Field != je.Field || fe.Message != je.Message {
				t.Errorf("%s: refused with %v, its JSON body with %v", c.form, formErr, jsonErr)
			}
			continue
		}
		if !proto.Equal(fromForm, fromJSON) {
			t.Errorf("%s: bound %v, its JSON body %v", c.form, fromForm, fromJSON)
		}
	}
}

// TestFormBodyGivesEachFieldOnce checks that a form naming a field twice
// is refused naming it, as a query parameter given twice is.
func TestFormBodyGivesEachFieldOnce(t *testing.T) {
	t.Parallel()
	var b writeBody
	err := b.useForm(url.Values{"content": {"a", "b"}})
	if e, ok := apierr.As(err); !ok || e.Code != 100 || e.Field != "content" {
		t.Fatalf("err = %v, want code 100 naming content", err)
	}
}

// TestFormBodyNamesItsNode checks that a form's node key routes the write
// as a JSON body's does.
func TestFormBodyNamesItsNode(t *testing.T) {
	t.Parallel()
	var b writeBody
	if err := b.useForm(url.Values{"node": {"page/7/posts"}, "content": {"x"}}); err != nil {
		t.Fatal(err)
	}
	if node, err := b.node(); err != nil || node != "page/7/posts" {
		t.Fatalf("node = %q, %v", node, err)
	}
}
