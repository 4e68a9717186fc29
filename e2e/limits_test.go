package e2e

import (
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/svcplatform/svc/internal/gatewaytest"
)

func TestRateLimitsAnswer4And17WithUsage(t *testing.T) {
	t.Parallel()
	cfg := filepath.Join(t.TempDir(), "config.json")
	if err := os.WriteFile(cfg, []byte(`{"rate_limits":{"app":3,"user":4,"page":-1}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	g := gatewaytest.Start(t, gatewaytest.Options{Args: []string{"--config", cfg}})
	c := g.Credentials(t)
	// The limiter counts in fixed windows aligned on the minute: start well
	// inside one, so that the calls below fall into the same window.
	if s := time.Now().Second(); s >= 50 {
		time.Sleep(time.Duration(61-s) * time.Second)
	}
	assets := url.Values{"node": {"page/" + c.Page.ID + "/connected_assets"}}

	for i := 1; i <= 4; i++ {
		res, body := do(t, "GET", g.URL+"/api/v1/graph?"+assets.Encode(), nil, map[string]string{"Authorization": "Bearer " + c.App.APIKey})
		if i <= 3 {
			if res.StatusCode != 200 {
				t.Fatalf("call %d: %d %s", i, res.StatusCode, body)
			}
			var usage struct {
				CallCount int `json:"call_count"`
			}
			if err := json.Unmarshal([]byte(res.Header.Get("X-App-Usage")), &usage); err != nil || usage.CallCount != i*100/3 {
				t.Fatalf("call %d: X-App-Usage = %q", i, res.Header.Get("X-App-Usage"))
			}
			continue
		}
		e := wantGraphError(t, res, body, 429, 4, 0)
		if !e.Error.IsTransient {
			t.Errorf("rate limit is not transient: %s", body)
		}
	}

	owner := c.Users["owner"]
	session := signInAt(t, g.URL, owner.Username, owner.Password)
	for i := 1; i <= 5; i++ {
		res, body := do(t, "GET", g.URL+"/api/v1/graph?node=me", nil, map[string]string{"Authorization": "Bearer " + session})
		if i <= 4 {
			if res.StatusCode != 200 {
				t.Fatalf("user call %d: %d %s", i, res.StatusCode, body)
			}
			continue
		}
		wantGraphError(t, res, body, 429, 17, 0)
	}
}
