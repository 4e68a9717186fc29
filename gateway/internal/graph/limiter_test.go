package graph

import (
	"context"
	"testing"
	"time"

	"github.com/svcplatform/svc/gateway/internal/apierr"
)

func TestLimiterRefusesEachCallerWithItsCode(t *testing.T) {
	t.Parallel()
	now := time.Unix(1_800_000_000, 0)
	l := NewLimiter(Limits{App: 2, User: 3, Page: 1, Window: time.Minute})
	l.now = func() time.Time { return now }
	ctx := context.Background()
	code := func(err error) int {
		if err == nil {
			return 0
		}
		e, _ := apierr.As(err)
		if e.HTTPStatus != 429 || !e.Transient {
			t.Fatalf("refusal %+v is not a transient 429", e)
		}
		return e.Code
	}
	steps := []struct {
		app, user, page string
		want            int
	}{
		{"a", "", "p1", 0},
		{"a", "", "p1", 32}, // the Page's one call is used
		{"a", "", "p2", 0},  // the refused call counted for nobody
		{"a", "", "p3", 4},  // the app's two calls are used
		{"", "u", "", 0},
		{"", "u", "", 0},
		{"", "u", "", 0},
		{"", "u", "", 17},
	}
	for i, s := range steps {
		got := code(l.Allow(ctx, s.app, s.user, s.page))
		if got != s.want {
			t.Fatalf("step %d: code %d, want %d", i, got, s.want)
		}
		if got == 0 {
			l.CountPage(s.page) // the call was authorized
		}
	}
	if u := l.Usage("a"); u != 100 {
		t.Fatalf("usage of a = %d%%, want 100", u)
	}
	now = now.Add(time.Minute)
	if err := l.Allow(ctx, "a", "u", "p1"); err != nil {
		t.Fatalf("a new window still refuses: %v", err)
	}
}

// Issue 16: anyone could exhaust a Page's quota with calls refused by
// authorization. Only authorized calls spend it.
func TestCallsRefusedByAuthorizationDoNotSpendAPagesQuota(t *testing.T) {
	t.Parallel()
	l := NewLimiter(Limits{Page: 2, Window: time.Hour})
	ctx := context.Background()
	for range 50 {
		if err := l.Allow(ctx, "intruder-app", "", "p1"); err != nil {
			t.Fatalf("the Page was exhausted by refused calls: %v", err)
		}
		// authorization refused the call: CountPage is not called
	}
	for _, refused := range []error{apierr.NoToken(), apierr.NotPageAdmin(), apierr.MissingScope("x")} {
		if authorized(refused) {
			t.Fatalf("%v counts as authorized", refused)
		}
	}
	if !authorized(nil) || !authorized(apierr.NotFound("x")) || !authorized(apierr.Invalid("f", "bad")) {
		t.Fatal("a call past its access check does not count")
	}
}
