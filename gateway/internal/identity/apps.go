package identity

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/svcplatform/svc/gateway/internal/coredb"
	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
)

// AppMode is an app's mode: development until App Review lets it go live.
type AppMode string

// App modes.
const (
	ModeDevelopment AppMode = "development"
	ModeLive        AppMode = "live"
)

// TeamRole is a user's role on an app's team.
type TeamRole string

// Team roles (the interface's Admin, Developer, Tester).
const (
	TeamAdmin     TeamRole = "admin"
	TeamDeveloper TeamRole = "developer"
	TeamTester    TeamRole = "tester"
)

// App is a developer application.
type App struct {
	ID       string
	Name     string
	ClientID string
	Mode     AppMode
	// SecretHash is the stored form of the client secret.
	SecretHash []byte
	// PreviousSecretHash is the secret before the last rotation while its
	// overlap lasts (when the app was loaded), else nil.
	PreviousSecretHash []byte
}

// Live reports whether the app is in live mode.
func (a App) Live() bool { return a.Mode == ModeLive }

func (s *store) appFrom(a coredb.CoreApp) App {
	app := App{ID: FormatID(a.ID), Name: a.Name, ClientID: a.ClientID, Mode: AppMode(a.Mode), SecretHash: a.ClientSecretHash}
	if a.PreviousSecretHash != nil && a.PreviousSecretExpiresAt.Valid && s.now().Before(a.PreviousSecretExpiresAt.Time) {
		app.PreviousSecretHash = a.PreviousSecretHash
	}
	return app
}

// NewApp describes an app to create.
type NewApp struct {
	Name string
	// AdminID, when set, becomes the team Admin and is the app's creator:
	// a user creates at most MaxAppsPerUser apps.
	AdminID      string
	RedirectURIs []string
	// Products to enable, e.g. "svcchat".
	Products []string
	// ClientSecret, when set, is used instead of a generated one (imports,
	// tests of client authentication).
	ClientSecret string
}

// CreatedApp is a new app with its client secret, shown this once.
type CreatedApp struct {
	App
	ClientSecret string
}

// CreateApp creates an app in development mode. Its client id is its app
// id; the client secret is returned once and stored only as a hash.
func (s *Apps) CreateApp(ctx context.Context, n NewApp) (CreatedApp, error) {
	if n.Name == "" {
		return CreatedApp{}, fmt.Errorf("app name is empty: %w", ErrInvalid)
	}
	for _, u := range n.RedirectURIs {
		if err := ValidRedirectURI(u); err != nil {
			return CreatedApp{}, err
		}
	}
	secret := n.ClientSecret
	if secret == "" {
		secret, _ = NewToken(PrefixClientSecret)
	}
	var out CreatedApp
	err := s.InTx(ctx, func(s *Service) error {
		creator, err := s.lockCreator(ctx, n.AdminID)
		if err != nil {
			return err
		}
		id, err := s.q.NextObjectID(ctx)
		if err != nil {
			return fmt.Errorf("reserve app id: %w", err)
		}
		a, err := s.q.CreateApp(ctx, coredb.CreateAppParams{ID: id, Name: n.Name, ClientID: FormatID(id),
			ClientSecretHash: HashToken(secret), Mode: string(ModeDevelopment), CreatedBy: creator})
		if err != nil {
			return fmt.Errorf("create app: %w", err)
		}
		out = CreatedApp{App: s.appFrom(a), ClientSecret: secret}
		if sealed := s.sealSecret(id, secret); sealed != nil {
			if err := s.q.SetClientSecretSealed(ctx, coredb.SetClientSecretSealedParams{ID: id, ClientSecretSealed: sealed}); err != nil {
				return fmt.Errorf("seal client secret: %w", err)
			}
		}
		for _, u := range n.RedirectURIs {
			if err := s.q.AddRedirectURI(ctx, coredb.AddRedirectURIParams{AppID: id, Uri: u}); err != nil {
				return fmt.Errorf("add redirect uri: %w", err)
			}
		}
		for _, p := range n.Products {
			if err := s.q.EnableAppProduct(ctx, coredb.EnableAppProductParams{AppID: id, Product: p}); err != nil {
				return fmt.Errorf("enable product %s: %w", p, err)
			}
		}
		if n.AdminID != "" {
			return s.Apps.SetTeamRole(ctx, out.ID, n.AdminID, TeamAdmin)
		}
		return nil
	})
	return out, err
}

// lockCreator checks, inside CreateApp's transaction, that the user
// may create one more app (a real person, under the limit), and answers the creator's id (nil for none). The
// user's row stays locked until the transaction ends, so that concurrent
// creations are counted one after the other and never pass the limit.
func (s *store) lockCreator(ctx context.Context, userID string) (*int64, error) {
	if userID == "" {
		return nil, nil
	}
	uid, err := mustID("user", userID)
	if err != nil {
		return nil, err
	}
	u, err := s.q.LockUser(ctx, uid)
	if err != nil {
		return nil, notFound(err, "user "+userID)
	}
	if u.TestUserOf != nil {
		// As Meta's: a Test User exists to try one app. Were it allowed apps
		// of its own, each with 100 Test Users who may do the same, the
		// self-service limits would bound nothing.
		return nil, fmt.Errorf("a Test User cannot create apps: %w", ErrTestUser)
	}
	n, err := s.q.CountAppsCreatedBy(ctx, &uid)
	if err != nil {
		return nil, fmt.Errorf("count apps: %w", err)
	}
	if n >= MaxAppsPerUser {
		return nil, fmt.Errorf("a user creates at most %d apps: %w", MaxAppsPerUser, ErrLimitReached)
	}
	return &uid, nil
}

// ValidRedirectURI refuses redirect URIs that cannot be registered: not
// absolute, with a fragment (RFC 6749 §3.1.2), plain HTTP to anything but
// loopback (development and native clients, RFC 8252 §7.3), or a custom
// scheme that is not a reverse domain name (RFC 8252 §7.1).
func ValidRedirectURI(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" {
		return fmt.Errorf("redirect uri %q is not an absolute URI: %w", raw, ErrInvalid)
	}
	if u.Fragment != "" || strings.Contains(raw, "#") {
		return fmt.Errorf("redirect uri %q has a fragment: %w", raw, ErrInvalid)
	}
	switch u.Scheme {
	case "https":
		if u.Host == "" {
			return fmt.Errorf("redirect uri %q has no host: %w", raw, ErrInvalid)
		}
	case "http":
		switch u.Hostname() {
		case "127.0.0.1", "::1", "localhost":
		default:
			return fmt.Errorf("redirect uri %q: plain http is allowed only to loopback: %w", raw, ErrInvalid)
		}
	default:
		if !strings.Contains(u.Scheme, ".") {
			return fmt.Errorf("redirect uri %q: a custom scheme must be a reverse domain name: %w", raw, ErrInvalid)
		}
	}
	return nil
}

// App returns the app with id.
func (s *Apps) App(ctx context.Context, id string) (App, error) {
	aid, err := mustID("app", id)
	if err != nil {
		return App{}, err
	}
	a, err := s.q.GetApp(ctx, aid)
	if err != nil {
		return App{}, notFound(err, "app "+id)
	}
	return s.appFrom(a), nil
}

// AppByClientID returns the app whose client id this is.
func (s *Apps) AppByClientID(ctx context.Context, clientID string) (App, error) {
	if clientID == "" {
		return App{}, fmt.Errorf("empty client id: %w", ErrNotFound)
	}
	a, err := s.q.GetAppByClientID(ctx, clientID)
	if err != nil {
		return App{}, notFound(err, "client")
	}
	return s.appFrom(a), nil
}

// CheckClientSecret reports whether secret is the app's client secret, or
// the one before the last rotation while the overlap lasts, in constant
// time.
func (a App) CheckClientSecret(secret string) bool {
	if secret == "" {
		return false
	}
	h := HashToken(secret)
	current := subtle.ConstantTimeCompare(h, a.SecretHash) == 1
	previous := a.PreviousSecretHash != nil && subtle.ConstantTimeCompare(h, a.PreviousSecretHash) == 1
	return current || previous
}

// SetClientSecret replaces the app's client secret with no overlap (unlike
// RotateClientSecret); "" makes a new random one. The new secret is
// returned once, and kept sealed like every client secret (it signs the
// app's webhooks).
func (s *Apps) SetClientSecret(ctx context.Context, appID, secret string) (string, error) {
	aid, err := mustID("app", appID)
	if err != nil {
		return "", err
	}
	if secret == "" {
		secret, _ = NewToken(PrefixClientSecret)
	}
	n, err := s.q.SetClientSecret(ctx, coredb.SetClientSecretParams{ID: aid, ClientSecretHash: HashToken(secret),
		ClientSecretSealed: s.sealSecret(aid, secret)})
	if err != nil {
		return "", fmt.Errorf("set client secret: %w", err)
	}
	if n == 0 {
		return "", fmt.Errorf("app %s: %w", appID, ErrNotFound)
	}
	s.env.secrets.Add(1)
	return secret, nil
}

// SecretGeneration changes whenever a client secret set or rotated
// through this Service is committed: a cache of client authentication
// (oauth) drops what it read before, so such a change takes effect on this
// gateway at once.
func (s *Apps) SecretGeneration() uint64 { return s.env.secrets.Load() }

// AddRedirectURI registers one more redirect URI; authorization requests
// must use a registered URI exactly.
func (s *Apps) AddRedirectURI(ctx context.Context, appID, uri string) error {
	aid, err := mustID("app", appID)
	if err != nil {
		return err
	}
	if err := ValidRedirectURI(uri); err != nil {
		return err
	}
	if err := s.q.AddRedirectURI(ctx, coredb.AddRedirectURIParams{AppID: aid, Uri: uri}); err != nil {
		return notFound(err, "add redirect uri")
	}
	return nil
}

// RedirectURIRegistered reports whether uri is registered for the app,
// compared exactly (no normalisation, RFC 9700 §4.1.3).
func (s *Apps) RedirectURIRegistered(ctx context.Context, appID, uri string) (bool, error) {
	aid, err := mustID("app", appID)
	if err != nil {
		return false, err
	}
	ok, err := s.q.HasRedirectURI(ctx, coredb.HasRedirectURIParams{AppID: aid, Uri: uri})
	if err != nil {
		return false, fmt.Errorf("check redirect uri: %w", err)
	}
	return ok, nil
}

// EnableProduct enables a product (e.g. svcchat) on the app.
func (s *Apps) EnableProduct(ctx context.Context, appID, product string) error {
	aid, err := mustID("app", appID)
	if err != nil {
		return err
	}
	if err := s.q.EnableAppProduct(ctx, coredb.EnableAppProductParams{AppID: aid, Product: product}); err != nil {
		return notFound(err, "enable product")
	}
	return nil
}

// AppProducts lists the products enabled on the app.
func (s *Apps) AppProducts(ctx context.Context, appID string) ([]string, error) {
	aid, err := mustID("app", appID)
	if err != nil {
		return nil, err
	}
	ps, err := s.q.ListAppProducts(ctx, aid)
	if err != nil {
		return nil, fmt.Errorf("list products: %w", err)
	}
	return ps, nil
}

// AppConfig returns the app's platformConfig as a JSON object ("{}" when
// none was saved).
func (s *Apps) AppConfig(ctx context.Context, appID string) ([]byte, error) {
	aid, err := mustID("app", appID)
	if err != nil {
		return nil, err
	}
	raw, err := s.q.GetAppConfig(ctx, aid)
	if errors.Is(err, pgx.ErrNoRows) {
		return []byte("{}"), nil
	}
	if err != nil {
		return nil, fmt.Errorf("app config %s: %w", appID, err)
	}
	return raw, nil
}

// SetTeamRole puts a user on the app's team with role, or changes the
// user's role. Demoting the last Admin is refused (ErrLastAdmin); a user
// that does not exist is ErrNotFound.
func (s *Apps) SetTeamRole(ctx context.Context, appID, userID string, role TeamRole) error {
	if !slices.Contains([]TeamRole{TeamAdmin, TeamDeveloper, TeamTester}, role) {
		return fmt.Errorf("team role %q: %w", role, ErrInvalid)
	}
	if _, err := s.all.Users.User(ctx, userID); err != nil {
		return err
	}
	return s.InTx(ctx, func(s *Service) error {
		aid, err := s.lockApp(ctx, appID)
		if err != nil {
			return err
		}
		current, err := s.Apps.TeamRole(ctx, appID, userID)
		if err != nil {
			return err
		}
		if err := s.keepAnAdmin(ctx, aid, current, role); err != nil {
			return err
		}
		uid, _ := ParseID(userID)
		if err := s.q.UpsertTeamMember(ctx, coredb.UpsertTeamMemberParams{AppID: aid, UserID: uid, Role: string(role)}); err != nil {
			return fmt.Errorf("set team role: %w", err)
		}
		return nil
	})
}

// TeamRole returns the user's role on the app's team, or "" when none.
func (s *Apps) TeamRole(ctx context.Context, appID, userID string) (TeamRole, error) {
	aid, ok1 := ParseID(appID)
	uid, ok2 := ParseID(userID)
	if !ok1 || !ok2 {
		return "", nil
	}
	r, err := s.q.GetTeamRole(ctx, coredb.GetTeamRoleParams{AppID: aid, UserID: uid})
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("team role: %w", err)
	}
	return TeamRole(r), nil
}

// AddTestUser makes a user a Test User of the app.
func (s *Apps) AddTestUser(ctx context.Context, appID, userID string) error {
	aid, err := mustID("app", appID)
	if err != nil {
		return err
	}
	uid, err := mustID("user", userID)
	if err != nil {
		return err
	}
	if err := s.q.AddTestUser(ctx, coredb.AddTestUserParams{AppID: aid, UserID: uid}); err != nil {
		return notFound(err, "test user")
	}
	return nil
}

// MayAuthorize reports whether the user may authorize the app: anyone when
// the app is live; in development mode only its team and Test Users.
func (s *Apps) MayAuthorize(ctx context.Context, app App, userID string) (bool, error) {
	if app.Live() {
		return true, nil
	}
	aid, _ := ParseID(app.ID)
	uid, ok := ParseID(userID)
	if !ok {
		return false, nil
	}
	ok, err := s.q.MayAuthorizeInDevelopment(ctx, coredb.MayAuthorizeInDevelopmentParams{AppID: aid, UserID: uid})
	if err != nil {
		return false, fmt.Errorf("development access: %w", err)
	}
	return ok, nil
}

// GrantableScopes are the scopes the app may be granted: any scope in
// development mode, and in live mode openid plus the scopes App Review
// approved.
func (s *Apps) GrantableScopes(ctx context.Context, app App) ([]string, error) {
	if !app.Live() {
		catalog, err := s.Scopes(ctx)
		if err != nil {
			return nil, err
		}
		return catalog.All(), nil
	}
	aid, _ := ParseID(app.ID)
	approved, err := s.q.ApprovedScopes(ctx, aid)
	if err != nil {
		return nil, fmt.Errorf("approved scopes: %w", err)
	}
	out := []string{ScopeOpenID}
	for _, sc := range approved {
		if sc != ScopeOpenID {
			out = append(out, sc)
		}
	}
	return out, nil
}

// LinkPage links the app to a Page (a business asset of type PAGE) with the
// products enabled on the link, replacing an earlier link's products.
func (s *Apps) LinkPage(ctx context.Context, appID, pageID string, products []string) error {
	aid, err := mustID("app", appID)
	if err != nil {
		return err
	}
	pid, err := mustID("page", pageID)
	if err != nil {
		return err
	}
	if products == nil {
		products = []string{}
	}
	if err := s.q.UpsertPageLink(ctx, coredb.UpsertPageLinkParams{PageID: pid, AppID: aid, Products: products}); err != nil {
		return notFound(err, "link page")
	}
	return nil
}

// UnlinkPage removes the link between the app and the Page.
func (s *Apps) UnlinkPage(ctx context.Context, appID, pageID string) error {
	aid, err := mustID("app", appID)
	if err != nil {
		return err
	}
	pid, err := mustID("page", pageID)
	if err != nil {
		return err
	}
	if _, err := s.q.DeletePageLink(ctx, coredb.DeletePageLinkParams{PageID: pid, AppID: aid}); err != nil {
		return fmt.Errorf("unlink page: %w", err)
	}
	return nil
}

// CreateAppKey issues an app API key: svc_test_… in development mode,
// svc_live_… once live. The key is returned once and stored as a hash.
func (s *Apps) CreateAppKey(ctx context.Context, appID string) (string, error) {
	app, err := s.App(ctx, appID)
	if err != nil {
		return "", err
	}
	prefix := PrefixTestKey
	if app.Live() {
		prefix = PrefixLiveKey
	}
	plain, hash := NewToken(prefix)
	aid, _ := ParseID(app.ID)
	if err := s.q.InsertCredential(ctx, coredb.InsertCredentialParams{TokenHash: hash,
		Kind: int16(pluginv1.TokenKind_TOKEN_KIND_APP_KEY), AppID: &aid, Scopes: []string{},
		Hint: plain[:len(prefix)+4]}); err != nil {
		return "", fmt.Errorf("store app key: %w", err)
	}
	return plain, nil
}

// MyApp is an app seen from one of its team members, with that member's
// role.
type MyApp struct {
	App
	Role TeamRole
}

// AppsOfUser lists the apps on whose team the user is, in id order, at
// most limit of them after the app id after ("" for the first page).
func (s *Apps) AppsOfUser(ctx context.Context, userID, after string, limit int) ([]MyApp, error) {
	uid, err := mustID("user", userID)
	if err != nil {
		return nil, err
	}
	var afterID int64
	if after != "" {
		if afterID, err = mustID("app", after); err != nil {
			return nil, err
		}
	}
	rows, err := s.q.ListAppsOfUser(ctx, coredb.ListAppsOfUserParams{UserID: uid, AfterID: afterID, MaxRows: int32(limit)})
	if err != nil {
		return nil, fmt.Errorf("list apps of user: %w", err)
	}
	out := make([]MyApp, 0, len(rows))
	for _, r := range rows {
		out = append(out, MyApp{App: App{ID: FormatID(r.ID), Name: r.Name, ClientID: r.ClientID, Mode: AppMode(r.Mode)}, Role: TeamRole(r.Role)})
	}
	return out, nil
}
