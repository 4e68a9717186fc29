package dispatch_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/svcplatform/svc/gateway/internal/apierr"
	"github.com/svcplatform/svc/gateway/internal/dispatch"
)

// CONTRACT §15: mobile writes are limited per user, 60 a minute each
// (429, code 17).
func TestUserRatesTheCallAfterTheMinutesCountIsRefusedWith429Code17(t *testing.T) {
	t.Parallel()
	now := time.Unix(6000, 0)
	rates := dispatch.NewUserRates(func() time.Time { return now })
	const dm, pageMessage = "/svc.chat.v1.ChatService/SendDirectMessage", "/svc.svcchat.v1.SvcchatService/WriteToPage"
	for i := range 60 {
		if err := rates.Allow(dm, "7", 60); err != nil {
			t.Fatalf("call %d: %v", i+1, err)
		}
	}
	err := rates.Allow(dm, "7", 60)
	if e, ok := apierr.As(err); !ok || e.HTTPStatus != http.StatusTooManyRequests || e.Code != 17 {
		t.Fatalf("the 61st call: %v, want 429 code 17", err)
	}
	if err := rates.Allow(dm, "8", 60); err != nil {
		t.Fatalf("another user is counted apart: %v", err)
	}
	if err := rates.Allow(pageMessage, "7", 60); err != nil {
		t.Fatalf("another method is counted apart: %v", err)
	}
	now = now.Add(time.Minute)
	if err := rates.Allow(dm, "7", 60); err != nil {
		t.Fatalf("the next minute starts afresh: %v", err)
	}
}
