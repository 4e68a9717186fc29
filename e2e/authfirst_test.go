package e2e

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"

	errorsv1 "github.com/svcplatform/svc/gen/svc/errors/v1"
	wearablesv1 "github.com/svcplatform/svc/gen/svc/wearables/v1"
	"github.com/svcplatform/svc/gen/svc/wearables/v1/wearablesv1connect"
	"github.com/svcplatform/svc/internal/gatewaytest"
)

// CONTRACT §15: a request without a valid credential is answered 401 (104
// no token, 190/467 a bad one) before its body, parameters or the node's
// own rules are looked at, on every surface; a public node still works
// without one.
func TestAuthenticationComesFirstARequestWithoutAValidCredentialAndABadBodyIsRefusedWith401(t *testing.T) {
	t.Parallel()
	g := gatewaytest.Start(t, gatewaytest.Options{})
	c := g.Credentials(t)
	graph := g.URL + "/api/v1/graph"
	// Each request is refused by its node for its body alone: a cart of the
	// wrong type, a message with a number for text, a card with no user.
	requests := []struct {
		name, url, body string
		idempotencyKey  string
	}{
		{"Graph checkout, node in the query", graph + "?node=maison/7000000001/checkout", `{"items":"three"}`, ""},
		{"Graph checkout, node in the body", graph, `{"node":"maison/7000000001/checkout","items":[{"quantity":"x"}]}`, ""},
		{"Graph checkout, a body that is not JSON", graph + "?node=maison/7000000001/checkout", `{"items":`, ""},
		{"Graph checkout with an Idempotency-Key", graph, `{"node":"maison/7000000001/checkout","items":"three"}`, "order-1"},
		{"Graph checkout with an Idempotency-Key too long", graph + "?node=maison/7000000001/checkout", `{"items":[]}`, strings.Repeat("k", 256)},
		{"Graph plugin write node", graph + "?node=page/" + c.Page.ID + "/messages", `{"recipient_user_id":7,"text":""}`, ""},
		{"Graph batch that does not parse", graph, `{"batch":"no"}`, ""},
		{"REST wearables push", g.URL + pushPath, `{"card":{"title":""}}`, ""},
		{"REST wearables push, a body that is not JSON", g.URL + pushPath, `{"card":`, ""},
	}
	credentials := []struct {
		name          string
		header        string
		code, subcode int
	}{
		{"no token", "", 104, 0},
		{"a token that names nothing", "Bearer svc_nothing_at_all", 190, 467},
	}
	for _, cred := range credentials {
		for _, r := range requests {
			t.Run(cred.name+"/"+r.name, func(t *testing.T) {
				h := map[string]string{"Content-Type": "application/json"}
				if cred.header != "" {
					h["Authorization"] = cred.header
				}
				if r.idempotencyKey != "" {
					h["Idempotency-Key"] = r.idempotencyKey
				}
				res, body := do(t, "POST", r.url, strings.NewReader(r.body), h)
				wantGraphError(t, res, body, http.StatusUnauthorized, cred.code, cred.subcode)
			})
		}
	}

	t.Run("with a valid credential the same bodies are refused for themselves", func(t *testing.T) {
		token := g.UserToken(t, "consumer", "commerce_checkout", "wearables:push")
		h := map[string]string{"Content-Type": "application/json", "Authorization": "Bearer " + token}
		res, body := do(t, "POST", requests[0].url, strings.NewReader(requests[0].body), h)
		wantGraphError(t, res, body, http.StatusBadRequest, 100, 0)
		res, body = do(t, "POST", requests[7].url, strings.NewReader(requests[7].body), h)
		wantGraphError(t, res, body, http.StatusBadRequest, 100, 0)
	})

	t.Run("gRPC wearables push", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		client := wearablesv1connect.NewWearablesServiceClient(h2cClient(), g.URL, connect.WithGRPC())
		push := func(header string) (*connect.Error, *errorsv1.GraphError) {
			req := connect.NewRequest(&wearablesv1.PushCardRequest{Card: &wearablesv1.CardContent{}})
			if header != "" {
				req.Header().Set("Authorization", header)
			}
			_, err := client.PushCard(ctx, req)
			var ce *connect.Error
			if !errors.As(err, &ce) {
				t.Fatalf("err = %v, want a refusal", err)
			}
			var detail *errorsv1.GraphError
			for _, d := range ce.Details() {
				if v, err := d.Value(); err == nil {
					if e, ok := v.(*errorsv1.GraphError); ok {
						detail = e
					}
				}
			}
			return ce, detail
		}
		for _, cred := range credentials {
			ce, detail := push(cred.header)
			if ce.Code() != connect.CodeUnauthenticated || detail.GetCode() != int32(cred.code) || detail.GetErrorSubcode() != int32(cred.subcode) {
				t.Fatalf("%s: refusal %v %v, want Unauthenticated %d/%d", cred.name, ce, detail, cred.code, cred.subcode)
			}
		}
		// With a credential the body's own refusal arrives, its numbers in
		// the detail (it was "internal": the gRPC status did not encode).
		ce, detail := push("Bearer " + g.UserToken(t, "consumer", "wearables:push"))
		if ce.Code() != connect.CodeInvalidArgument || detail.GetCode() != 100 {
			t.Fatalf("a valid token and a bad body: %v %v, want InvalidArgument with code 100", ce, detail)
		}
	})

	t.Run("a node that does not exist is still 404 without a credential", func(t *testing.T) {
		res, body := do(t, "GET", graph+"?node=no_such_thing/1", nil, nil)
		wantGraphError(t, res, body, http.StatusNotFound, 2500, 0)
	})
}

// A REST read is transcoded to a Connect GET, whose path and query the
// transcoder decodes before the method's handler runs: the credential is
// checked before that too. A query parameter that names no field is a
// parameter error (it was an internal error).
func TestAuthenticationComesFirstARESTReadWithABadQueryWithoutAValidCredentialIsRefusedWith401(t *testing.T) {
	t.Parallel()
	g := gatewaytest.Start(t, gatewaytest.Options{})
	c := g.Credentials(t)
	posts := g.URL + "/api/v1/pages/" + c.Page.ID + "/posts"
	for _, query := range []string{"?limit=abc", "?nosuch=1", "?limit=abc&nosuch=1", ""} {
		for _, cred := range []struct {
			name, header  string
			code, subcode int
		}{
			{"no token", "", 104, 0},
			{"a token that names nothing", "Bearer svc_bogus", 190, 467},
		} {
			t.Run(cred.name+"/"+query, func(t *testing.T) {
				h := map[string]string{}
				if cred.header != "" {
					h["Authorization"] = cred.header
				}
				res, body := do(t, "GET", posts+query, nil, h)
				wantGraphError(t, res, body, http.StatusUnauthorized, cred.code, cred.subcode)
			})
		}
	}

	t.Run("with a valid credential the query is refused for itself", func(t *testing.T) {
		h := map[string]string{"Authorization": "Bearer " + c.App.APIKey}
		res, body := do(t, "GET", posts+"?nosuch=1", nil, h)
		if e := wantGraphError(t, res, body, http.StatusBadRequest, 100, 0); !strings.Contains(e.Error.Message, "nosuch") {
			t.Fatalf("the refusal does not name the parameter: %s", body)
		}
		res, body = do(t, "GET", posts+"?limit=abc", nil, h)
		wantGraphError(t, res, body, http.StatusBadRequest, 100, 0)
		reader := map[string]string{"Authorization": "Bearer " + g.UserToken(t, "consumer", "pages:read")}
		if res, body := do(t, "GET", posts+"?limit=1", nil, reader); res.StatusCode != http.StatusOK {
			t.Fatalf("a good read: %d %s", res.StatusCode, body)
		}
	})
}
