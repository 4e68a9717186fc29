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
		if got := code(l.Allow(ctx, s.app, s.user, s.page)); got != s.want {
			t.Fatalf("step %d: code %d, want %d", i, got, s.want)
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
