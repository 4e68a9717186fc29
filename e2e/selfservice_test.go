package e2e

import (
	"fmt"
	"strings"
	"testing"
)

// Self-service is bounded (CONTRACT §15): 100 Test Users per app and 50 apps
// per user, then 400 with code 100 and a message naming the limit.
func TestSelfServiceStopsAt100TestUsersPerAppAnd50AppsPerUser(t *testing.T) {
	t.Parallel()
	w := newLifecycleWorld(t)

	created := 0
	for ; created <= 100; created++ {
		res, body := w.post(t, w.session, map[string]any{"node": w.node("test_users")}, nil)
		if res.StatusCode != 200 {
			e := wantGraphError(t, res, body, 400, 100, 0)
			if !strings.Contains(e.Error.Message, "100 Test Users") {
				t.Fatalf("refusal does not name the limit: %s", body)
			}
			break
		}
	}
	if created != 100 {
		t.Fatalf("%d Test Users created before the refusal, want 100", created)
	}

	// The seed's app and the world's app are the owner's first two.
	apps := 2
	for ; apps <= 50; apps++ {
		res, body := w.post(t, w.session, map[string]any{"node": "me/apps", "name": fmt.Sprintf("App %d", apps),
			"redirect_uris": []string{lifecycleRedirect}}, nil)
		if res.StatusCode != 200 {
			e := wantGraphError(t, res, body, 400, 100, 0)
			if !strings.Contains(e.Error.Message, "50 apps") {
				t.Fatalf("refusal does not name the limit: %s", body)
			}
			break
		}
	}
	if apps != 50 {
		t.Fatalf("%d apps before the refusal, want 50", apps)
	}
}
