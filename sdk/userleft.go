package sdk

import (
	"context"
	"net/http"

	"google.golang.org/protobuf/proto"

	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
	"github.com/svcplatform/svc/internal/plugin/pluginrt"
)

// OnUserLeft registers fn as the plugin's user-left hook and declares it in
// the manifest: when a person leaves the platform (DELETE ?node=me), the
// gateway calls fn with their user id, and calls it again until it returns
// nil, from any gateway, after a restart too. fn erases everything the
// plugin keeps of the person (what they wrote, their settings, their
// blocks; not what a Page wrote to them under the Page's own name unless
// it is theirs alone) and must be idempotent: a second call finds nothing
// and returns nil. Only the gateway calls it: it has no Graph node or
// route, and no app or person can reach it.
func OnUserLeft(p *Plugin, fn func(ctx context.Context, userID string) error) {
	p.rt().OnUserLeft(func(ctx context.Context, call *pluginrt.Call, in []byte) ([]byte, error) {
		if call.Principal().GetTokenKind() != pluginv1.TokenKind_TOKEN_KIND_ADMIN {
			return nil, Errorf(http.StatusForbidden, 200, 0, "Only the platform tells a plugin that a person left.")
		}
		var req pluginv1.UserLeftRequest
		if err := proto.Unmarshal(in, &req); err != nil {
			return nil, Invalid("", "The request could not be decoded: %v.", err)
		}
		if _, ok := ParseID(req.GetUserId()); !ok {
			return nil, Invalid("user_id", "Invalid parameter: user_id.")
		}
		if err := fn(ctx, req.GetUserId()); err != nil {
			return nil, err
		}
		return pluginrt.EncodeAnswer(&pluginv1.UserLeftResponse{})
	})
}
