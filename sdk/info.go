package sdk

import (
	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
)

// Info identifies a plugin.
type Info struct {
	// Name is the plugin's name; it must be the file name of its binary in
	// the gateway's plugins folder, e.g. "book".
	Name string
	// Version is the plugin's own version, shown to operators.
	Version string
	// Events lists the event types the plugin may emit, e.g.
	// "book.post.created".
	Events []string
}

// TokenKind is the kind of credential a caller presented. The kinds number
// as svc.plugin.v1.TokenKind, whose names the access rules of a proto file
// use (TOKEN_KIND_USER is TokenKindUser).
type TokenKind int32

// The kinds of credential.
const (
	// TokenKindNone: a public method called without a credential.
	TokenKindNone TokenKind = 0
	// TokenKindUser: a user access token from the OAuth code flow.
	TokenKindUser TokenKind = 1
	// TokenKindSystemUser: a system user token from the client_credentials
	// grant.
	TokenKindSystemUser TokenKind = 2
	// TokenKindAppKey: an app API key (svc_test_… or svc_live_…).
	TokenKindAppKey TokenKind = 3
	// TokenKindSession: a first-party mobile or console session.
	TokenKindSession TokenKind = 4
	// TokenKindAdmin: the operator's admin token.
	TokenKindAdmin TokenKind = 5
	// TokenKindPlugin: a plugin acting as itself through the host (its
	// background work, not a call it serves).
	TokenKindPlugin TokenKind = 6
)

// Principal is the caller of a method, resolved and authorized by the
// gateway. Plugins never see credentials.
type Principal struct {
	// Kind is the kind of credential the caller presented; TokenKindNone
	// for public methods called without one.
	Kind TokenKind
	// UserID is the user the call acts for, if any.
	UserID string
	// AppID is the app that made the call, if any.
	AppID string
	// Scopes are the scopes the credential carries. Read-only: a plugin
	// running inside the gateway shares the slice with the gateway's
	// credential cache (clone it to sort or edit it).
	Scopes []string
	// Live is true when the app is in live mode (false: development mode).
	Live bool
	// Staff is true when the user is platform staff.
	Staff bool
	// Plugin names the calling plugin when it acts as itself (Kind
	// TokenKindPlugin: another plugin's background work, through the host).
	Plugin string
}

// HasScope tells whether the credential carries scope.
func (p Principal) HasScope(scope string) bool {
	for _, s := range p.Scopes {
		if s == scope {
			return true
		}
	}
	return false
}

// principalFromProto returns the Go form of a wire principal; nil is the
// anonymous caller.
func principalFromProto(p *pluginv1.Principal) Principal {
	return Principal{
		Kind: TokenKind(p.GetTokenKind()), UserID: p.GetUserId(), AppID: p.GetAppId(),
		Scopes: p.GetScopes(), Live: p.GetLive(), Staff: p.GetStaff(), Plugin: p.GetPlugin(),
	}
}
