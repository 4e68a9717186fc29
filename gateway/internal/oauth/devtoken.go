package oauth

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/svcplatform/svc/gateway/internal/coredb"
	"github.com/svcplatform/svc/gateway/internal/identity"
	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
)

// ErrRefused wraps the reasons DevelopmentToken refuses (a live app, a user
// who may not authorize the app, a scope it may not be granted); its
// message is meant for the developer who asked.
var ErrRefused = errors.New("refused")

// DevelopmentToken is the user access token `gateway token` prints: one a
// developer would get from the code flow, without the browser (CONTRACT
// §20). Only for a development-mode app; the user must be one who may
// authorize it there (its team and Test Users, as at /oauth/authorize) and
// the scopes ones it may be granted. scopes is space- or comma-separated;
// empty means public_profile, as at /oauth/authorize. The token is one of a
// grant like any other: stored only as a hash, revocable, AccessTokenTTL.
func DevelopmentToken(ctx context.Context, ids *identity.Service, appID, username, scopes string, now time.Time) (token string, granted []string, err error) {
	app, err := ids.Apps.App(ctx, appID)
	if err != nil {
		return "", nil, err
	}
	if app.Live() {
		return "", nil, fmt.Errorf("app %s is live: a user token of a live app comes only from the OAuth code flow, with the user's consent: %w", appID, ErrRefused)
	}
	user, err := ids.Users.UserByUsername(ctx, username)
	if err != nil {
		return "", nil, err
	}
	allowed, err := ids.Apps.MayAuthorize(ctx, app, user.ID)
	if err != nil {
		return "", nil, err
	}
	if !allowed {
		return "", nil, fmt.Errorf("%s is neither on the team of app %s (Admin, Developer, Tester) nor one of its Test Users, so may not authorize it in development mode: %w", username, appID, ErrRefused)
	}
	catalog, err := ids.Scopes(ctx)
	if err != nil {
		return "", nil, err
	}
	granted, err = catalog.Parse(strings.ReplaceAll(scopes, ",", " "))
	if err != nil {
		return "", nil, fmt.Errorf("%w (known scopes: %s): %w", err, strings.Join(catalog.All(), " "), ErrRefused)
	}
	if len(granted) == 0 {
		granted = []string{identity.ScopePublicProfile}
	}
	if sc, err := ungrantable(ctx, ids, app, granted); err != nil {
		return "", nil, err
	} else if sc != "" {
		return "", nil, fmt.Errorf("app %s may not be granted the scope %s: %w", appID, sc, ErrRefused)
	}
	aid, _ := identity.ParseID(app.ID)
	uid, _ := identity.ParseID(user.ID)
	token, err = issueAccessToken(ctx, ids, aid, &uid, granted, now)
	return token, granted, err
}

// ungrantable returns the first of scopes that the app may not be granted
// (identity.GrantableScopes), or "" when it may be granted them all.
func ungrantable(ctx context.Context, ids *identity.Service, app identity.App, scopes []string) (string, error) {
	grantable, err := ids.Apps.GrantableScopes(ctx, app)
	if err != nil {
		return "", err
	}
	for _, sc := range scopes {
		if !slices.Contains(grantable, sc) {
			return sc, nil
		}
	}
	return "", nil
}

// issueAccessToken records a grant of scopes to the app, for the user uid
// (nil: the app's system user), and issues its one access token, valid
// AccessTokenTTL from now, with no refresh token. The token is stored only
// as its hash; revoking the grant revokes it.
func issueAccessToken(ctx context.Context, ids *identity.Service, aid int64, uid *int64, scopes []string, now time.Time) (string, error) {
	kind, prefix := pluginv1.TokenKind_TOKEN_KIND_SYSTEM_USER, identity.PrefixSystemToken
	if uid != nil {
		kind, prefix = pluginv1.TokenKind_TOKEN_KIND_USER, identity.PrefixAccessToken
	}
	access, accessHash := identity.NewToken(prefix)
	err := ids.InTx(ctx, func(tx *identity.Service) error {
		q := tx.Queries()
		grant, err := q.CreateGrant(ctx, coredb.CreateGrantParams{AppID: aid, UserID: uid, Scopes: scopes})
		if err != nil {
			return fmt.Errorf("create grant: %w", err)
		}
		return q.InsertCredential(ctx, coredb.InsertCredentialParams{TokenHash: accessHash,
			Kind: int16(kind), AppID: &aid, UserID: uid, Scopes: scopes,
			GrantID: &grant, ExpiresAt: timestamptz(now.Add(identity.AccessTokenTTL))})
	})
	if err != nil {
		return "", err
	}
	return access, nil
}
