// Package leavetest calls a plugin's user-left hook (sdk.OnUserLeft) in
// its tests as the gateway does: the reserved procedure, with the
// operator's authority.
package leavetest

import (
	"context"
	"testing"

	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
	"github.com/svcplatform/svc/internal/plugin/pluginrt"
	"github.com/svcplatform/svc/sdk"
	"github.com/svcplatform/svc/sdk/plugintest"
)

// Leave tells tp that userID left, and fails t unless the hook answers.
func Leave(t testing.TB, tp *plugintest.Plugin, userID string) {
	t.Helper()
	if err := Call(t.Context(), tp, sdk.Principal{Kind: sdk.TokenKindAdmin}, userID); err != nil {
		t.Fatalf("user-left hook for %s: %v", userID, err)
	}
}

// Call calls tp's user-left hook as caller.
func Call(ctx context.Context, tp *plugintest.Plugin, caller sdk.Principal, userID string) error {
	_, err := plugintest.Call[*pluginv1.UserLeftResponse](ctx, tp, pluginrt.UserLeftProcedure, caller,
		&pluginv1.UserLeftRequest{UserId: userID})
	return err
}
