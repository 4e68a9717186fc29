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

// Principal is the caller of a method, resolved and authorized by the
// gateway. Plugins never see credentials.
type Principal struct {
	// Kind is the kind of credential the caller presented; unspecified for
	// public methods called without one.
	Kind pluginv1.TokenKind
	// UserID is the user the call acts for, if any.
	UserID string
	// AppID is the app that made the call, if any.
	AppID string
	// Scopes are the scopes the credential carries.
	Scopes []string
	// Live is true when the app is in live mode (false: development mode).
	Live bool
	// Staff is true when the user is platform staff.
	Staff bool
	// Plugin names the calling plugin when it acts as itself (Kind
	// TOKEN_KIND_PLUGIN: another plugin's background work, through the
	// host).
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

// Proto returns the wire form of p.
func (p Principal) Proto() *pluginv1.Principal {
	return &pluginv1.Principal{
		TokenKind: p.Kind, UserId: p.UserID, AppId: p.AppID,
		Scopes: p.Scopes, Live: p.Live, Staff: p.Staff, Plugin: p.Plugin,
	}
}

// PrincipalFromProto returns the Go form of a wire principal; nil is the
// anonymous caller.
func PrincipalFromProto(p *pluginv1.Principal) Principal {
	return Principal{
		Kind: p.GetTokenKind(), UserID: p.GetUserId(), AppID: p.GetAppId(),
		Scopes: p.GetScopes(), Live: p.GetLive(), Staff: p.GetStaff(), Plugin: p.GetPlugin(),
	}
}
