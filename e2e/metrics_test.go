package e2e

import (
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/svcplatform/svc/internal/gatewaytest"
)

// scrape reads a gateway's /metrics with the operator's admin token, the
// only credential it answers on the main port (CONTRACT §15).
func scrape(t *testing.T, g *gatewaytest.Gateway) (*http.Response, []byte) {
	t.Helper()
	return do(t, "GET", g.URL+"/metrics", nil, map[string]string{"Authorization": "Bearer " + g.Credentials(t).AdminToken})
}

// CONTRACT §15: /metrics answers only the admin token (401 otherwise),
// unless the operator serves it on a separate listener.
func TestMetricsAnswerOnlyTheAdminTokenUnlessServedOnASeparateListener(t *testing.T) {
	t.Parallel()
	t.Run("on the main port", func(t *testing.T) {
		g := gatewaytest.Start(t, gatewaytest.Options{})
		c := g.Credentials(t)
		for _, r := range []struct {
			name, token   string
			code, subcode int
		}{
			{"no token", "", 104, 0},
			{"a token that names nothing", "svc_nothing_at_all", 190, 467},
			{"a user's token", g.UserToken(t, "owner", "pages:read"), 190, 0},
			{"the app's key", c.App.APIKey, 190, 0},
		} {
			h := map[string]string{}
			if r.token != "" {
				h["Authorization"] = "Bearer " + r.token
			}
			res, body := do(t, "GET", g.URL+"/metrics", nil, h)
			wantGraphError(t, res, body, http.StatusUnauthorized, r.code, r.subcode)
		}
		res, body := scrape(t, g)
		if res.StatusCode != 200 || !strings.Contains(string(body), "svc_http_requests_total") {
			t.Fatalf("the admin token: %d %.200s", res.StatusCode, body)
		}
	})
	t.Run("on a listener of its own", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		g := gatewaytest.Start(t, gatewaytest.Options{Args: []string{"--metrics-addr", addr}})
		res, body := do(t, "GET", "http://"+addr+"/metrics", nil, nil)
		if res.StatusCode != 200 || !strings.Contains(string(body), "svc_http_requests_total") {
			t.Fatalf("the metrics listener: %d %.200s", res.StatusCode, body)
		}
		if res, _ := scrape(t, g); res.StatusCode == 200 {
			t.Fatal("the main port still serves /metrics")
		}
	})
}
