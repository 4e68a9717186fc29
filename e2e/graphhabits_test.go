package e2e

import (
	"net/url"
	"strings"
	"testing"
)

// TestMetasGraphHabitsWorkOnARealGateway checks CONTRACT §20 and issue 28
// items 3 and 8 against a running gateway and the svcchat plugin: a
// form-encoded write with a nested JSON value and access_token in the form
// (as curl -d sends it), access_token in the query of a
// read, the templates list paged by limit with a next link that carries
// the caller's access_token, and the refusal of two different tokens.
func TestMetasGraphHabitsWorkOnARealGateway(t *testing.T) {
	t.Parallel()
	w := newChatWorld(t)
	key := w.c.App.APIKey
	node := "app/" + w.c.App.ID + "/svcchat_templates"
	graphURL := w.g.URL + "/api/v1/graph"

	form := map[string]string{"Content-Type": "application/x-www-form-urlencoded"}
	res, body := do(t, "POST", graphURL, strings.NewReader(url.Values{"node": {node}, "name": {"pickup_ready"},
		"body": {"Hi {{name}}, your order is ready."}, "params": {`["name"]`}, "access_token": {key}}.Encode()), form)
	created := decode[struct {
		Name, Status string
		Params       []string
	}](t, body)
	if res.StatusCode != 200 || created.Status != "draft" || strings.Join(created.Params, ",") != "name" {
		t.Fatalf("form-encoded create: %d %s", res.StatusCode, body)
	}
	// A nested value that is not the JSON its field takes is refused as in
	// a JSON body, naming the field.
	res, body = do(t, "POST", graphURL, strings.NewReader(url.Values{"node": {node}, "name": {"bad"}, "body": {"x"},
		"params": {"name"}, "access_token": {key}}.Encode()), form)
	if e := wantGraphError(t, res, body, 400, 100, 0); !strings.Contains(e.Error.Message, "params") {
		t.Fatalf("params not JSON: %s", body)
	}

	type page struct {
		Data   []struct{ Name string }
		Paging struct {
			Next string `json:"next"`
		}
	}
	res, body = do(t, "GET", graphURL+"?"+url.Values{"node": {node}, "limit": {"2"}, "access_token": {key}}.Encode(), nil, nil)
	first := decode[page](t, body)
	if res.StatusCode != 200 || len(first.Data) != 2 || first.Data[0].Name != "hello_world" || first.Paging.Next == "" {
		t.Fatalf("first page with access_token in the query: %d %s", res.StatusCode, body)
	}
	res, body = do(t, "GET", first.Paging.Next, nil, nil)
	next := decode[page](t, body)
	if res.StatusCode != 200 || len(next.Data) != 1 || next.Data[0].Name != "pickup_ready" || next.Paging.Next != "" {
		t.Fatalf("the next link, followed as it is: %d %s", res.StatusCode, body)
	}

	res, body = do(t, "GET", graphURL+"?"+url.Values{"node": {node}, "access_token": {"someone_else"}}.Encode(), nil,
		map[string]string{"Authorization": "Bearer " + key})
	if e := wantGraphError(t, res, body, 400, 100, 0); !strings.Contains(e.Error.Message, "access_token") {
		t.Fatalf("two tokens: %s", body)
	}
}
