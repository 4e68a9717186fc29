package identity

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/svcplatform/svc/gateway/internal/coredb"
)

// KeyOverlap is how long a rotated app key or client secret keeps working
// beside its replacement, so that a deployment can switch without downtime.
const KeyOverlap = 24 * time.Hour

// Bounds of self-service (CONTRACT §15): what one app, or one user, may
// create.
const (
	// MaxRedirectURIs bounds the redirect URIs of one app.
	MaxRedirectURIs = 20
	// MaxTestUsersPerApp bounds the Test Users of one app.
	MaxTestUsersPerApp = 100
	// MaxAppsPerUser bounds the apps one user creates.
	MaxAppsPerUser = 50
)

// ---- redirect URIs ------------------------------------------------------

// RedirectURIs lists the app's registered redirect URIs.
func (s *Apps) RedirectURIs(ctx context.Context, appID string) ([]string, error) {
	aid, err := mustID("app", appID)
	if err != nil {
		return nil, err
	}
	uris, err := s.q.ListRedirectURIs(ctx, aid)
	if err != nil {
		return nil, fmt.Errorf("list redirect uris: %w", err)
	}
	return uris, nil
}

// RegisterRedirectURI adds a redirect URI (ValidRedirectURI), at most
// MaxRedirectURIs per app; adding one already registered changes nothing.
// It is used exactly as given from the next authorization request on.
func (s *Apps) RegisterRedirectURI(ctx context.Context, appID, uri string) error {
	if err := ValidRedirectURI(uri); err != nil {
		return err
	}
	return s.InTx(ctx, func(s *Service) error {
		aid, err := s.lockApp(ctx, appID)
		if err != nil {
			return err
		}
		n, err := s.q.CountRedirectURIs(ctx, aid)
		if err != nil {
			return fmt.Errorf("count redirect uris: %w", err)
		}
		if ok, err := s.q.HasRedirectURI(ctx, coredb.HasRedirectURIParams{AppID: aid, Uri: uri}); err != nil || ok {
			return err
		}
		if n >= MaxRedirectURIs {
			return fmt.Errorf("an app has at most %d redirect URIs: %w", MaxRedirectURIs, ErrInvalid)
		}
		return s.q.AddRedirectURI(ctx, coredb.AddRedirectURIParams{AppID: aid, Uri: uri})
	})
}

// RemoveRedirectURI unregisters a redirect URI: authorization requests
// naming it are refused from now on. ErrNotFound when it was not registered.
func (s *Apps) RemoveRedirectURI(ctx context.Context, appID, uri string) error {
	aid, err := mustID("app", appID)
	if err != nil {
		return err
	}
	n, err := s.q.DeleteRedirectURI(ctx, coredb.DeleteRedirectURIParams{AppID: aid, Uri: uri})
	if err != nil {
		return fmt.Errorf("remove redirect uri: %w", err)
	}
	if n == 0 {
		return fmt.Errorf("redirect uri %q: %w", uri, ErrNotFound)
	}
	return nil
}

// ---- team roles ---------------------------------------------------------

// TeamMember is one user's role on an app's team.
type TeamMember struct {
	UserID string
	Role   TeamRole
}

// Team lists the app's team, by user id.
func (s *Apps) Team(ctx context.Context, appID string) ([]TeamMember, error) {
	aid, err := mustID("app", appID)
	if err != nil {
		return nil, err
	}
	rows, err := s.q.ListTeam(ctx, aid)
	if err != nil {
		return nil, fmt.Errorf("list team: %w", err)
	}
	out := make([]TeamMember, 0, len(rows))
	for _, r := range rows {
		out = append(out, TeamMember{UserID: FormatID(r.UserID), Role: TeamRole(r.Role)})
	}
	return out, nil
}

// RemoveTeamMember takes a user off the app's team. The last Admin cannot
// be removed (ErrLastAdmin); ErrNotFound when the user is not on the team.
func (s *Apps) RemoveTeamMember(ctx context.Context, appID, userID string) error {
	return s.InTx(ctx, func(s *Service) error {
		aid, err := s.lockApp(ctx, appID)
		if err != nil {
			return err
		}
		current, err := s.Apps.TeamRole(ctx, appID, userID)
		if err != nil {
			return err
		}
		if current == "" {
			return fmt.Errorf("user %s on the team of app %s: %w", userID, appID, ErrNotFound)
		}
		if err := s.keepAnAdmin(ctx, aid, current, ""); err != nil {
			return err
		}
		uid, _ := ParseID(userID)
		_, err = s.q.DeleteTeamMember(ctx, coredb.DeleteTeamMemberParams{AppID: aid, UserID: uid})
		return err
	})
}

// keepAnAdmin refuses a change of a member from role current to role next
// ("" for removal) that would leave the team without an Admin. The app row
// is locked by the caller, so two such changes cannot both pass.
func (s *store) keepAnAdmin(ctx context.Context, aid int64, current, next TeamRole) error {
	if current != TeamAdmin || next == TeamAdmin {
		return nil
	}
	n, err := s.q.CountTeamAdmins(ctx, aid)
	if err != nil {
		return fmt.Errorf("count admins: %w", err)
	}
	if n <= 1 {
		return ErrLastAdmin
	}
	return nil
}

// ---- Test Users -----------------------------------------------------------

// TestUser is a Test User of an app. Password is set only when it was just
// created: it is shown once.
type TestUser struct {
	ID       string
	Username string
	Name     string
	Password string
}

// CreateTestUser makes a new user for the app, a Test User who may sign in
// and authorize the app while it is in development mode. The password is
// random, returned once, and stored as an argon2id hash like every user's,
// computed in a hashing slot before the transaction, which then only
// counts the app's Test Users (at most MaxTestUsersPerApp, under the app's
// row lock) and inserts. An app already at the cap is refused before the
// hash, so that refused requests take no hashing slot from sign-in; the
// locked count in the transaction stays the one that decides.
func (s *Apps) CreateTestUser(ctx context.Context, appID string) (TestUser, error) {
	if _, err := s.App(ctx, appID); err != nil {
		return TestUser{}, err
	}
	aid, err := mustID("app", appID)
	if err != nil {
		return TestUser{}, err
	}
	if n, err := s.q.CountTestUsers(ctx, aid); err != nil {
		return TestUser{}, fmt.Errorf("count test users: %w", err)
	} else if n >= MaxTestUsersPerApp {
		return TestUser{}, fmt.Errorf("an app has at most %d Test Users: %w", MaxTestUsersPerApp, ErrLimitReached)
	}
	password := NewPassword()
	hash, err := s.hashPassword(ctx, password)
	if err != nil {
		return TestUser{}, err
	}
	for range 3 { // a collision of 60 random bits is not expected; retry anyway
		suffix := randomString(8)
		var out TestUser
		err := s.InTx(ctx, func(s *Service) error {
			aid, err := s.lockApp(ctx, appID)
			if err != nil {
				return err
			}
			if n, err := s.q.CountTestUsers(ctx, aid); err != nil {
				return fmt.Errorf("count test users: %w", err)
			} else if n >= MaxTestUsersPerApp {
				return fmt.Errorf("an app has at most %d Test Users: %w", MaxTestUsersPerApp, ErrLimitReached)
			}
			u, err := s.insertUser(ctx, NewUser{Username: "test_" + suffix, Name: "Test User " + suffix[:4],
				TestUserOf: appID}, hash)
			if err != nil {
				return err
			}
			out = TestUser{ID: u.ID, Username: u.Username, Name: u.Name, Password: password}
			return s.Apps.AddTestUser(ctx, appID, u.ID)
		})
		if errors.Is(err, ErrUsernameTaken) {
			continue // the failed insert ended that transaction: try a new one
		}
		return out, err
	}
	return TestUser{}, errors.New("create test user: no free username")
}

// TestUsers lists the app's Test Users, by id, without passwords.
func (s *Apps) TestUsers(ctx context.Context, appID string) ([]TestUser, error) {
	aid, err := mustID("app", appID)
	if err != nil {
		return nil, err
	}
	rows, err := s.q.ListTestUsers(ctx, aid)
	if err != nil {
		return nil, fmt.Errorf("list test users: %w", err)
	}
	out := make([]TestUser, 0, len(rows))
	for _, r := range rows {
		out = append(out, TestUser{ID: FormatID(r.ID), Username: r.Username, Name: r.Name})
	}
	return out, nil
}

// RemoveTestUser ends a user's standing as the app's Test User. A Test User
// the app created is deleted with its sessions and tokens; a user who
// existed before only loses the standing. ErrNotFound when the user is not
// a Test User of the app.
func (s *Apps) RemoveTestUser(ctx context.Context, appID, userID string) error {
	aid, err := mustID("app", appID)
	if err != nil {
		return err
	}
	uid, err := mustID("user", userID)
	if err != nil {
		return err
	}
	return s.InTx(ctx, func(s *Service) error {
		n, err := s.q.DeleteTestUser(ctx, coredb.DeleteTestUserParams{AppID: aid, UserID: uid})
		if err != nil {
			return fmt.Errorf("remove test user: %w", err)
		}
		if n == 0 {
			return fmt.Errorf("test user %s of app %s: %w", userID, appID, ErrNotFound)
		}
		_, err = s.q.DeleteUserMadeForApp(ctx, coredb.DeleteUserMadeForAppParams{UserID: uid, AppID: &aid})
		return err
	})
}

// ---- keys -----------------------------------------------------------------

// Rotated is a new credential, shown once, and until when the one it
// replaces keeps working (zero when there was none).
type Rotated struct {
	Value             string
	PreviousExpiresAt time.Time
	// Expired are the hashes of the keys whose overlap was set, for the
	// authenticator's cache.
	Expired [][]byte
}

// RotateAppKey issues a new app API key (svc_test_… or svc_live_… by the
// app's mode). The app's other keys keep working for KeyOverlap more, then
// never; a key already due to expire sooner keeps its earlier end.
func (s *Apps) RotateAppKey(ctx context.Context, appID string) (Rotated, error) {
	var out Rotated
	err := s.InTx(ctx, func(s *Service) error {
		aid, err := s.lockApp(ctx, appID)
		if err != nil {
			return err
		}
		key, err := s.Apps.CreateAppKey(ctx, appID)
		if err != nil {
			return err
		}
		until := s.now().Add(KeyOverlap).UTC().Truncate(time.Second)
		expired, err := s.q.ExpireAppKeys(ctx, coredb.ExpireAppKeysParams{AppID: &aid, Keep: HashToken(key),
			Until: pgtype.Timestamptz{Time: until, Valid: true}})
		if err != nil {
			return fmt.Errorf("expire previous keys: %w", err)
		}
		out = Rotated{Value: key, Expired: expired}
		if len(expired) > 0 {
			out.PreviousExpiresAt = until
		}
		return nil
	})
	return out, err
}

// RotateClientSecret replaces the app's client secret with a new random
// one, returned once. The previous secret keeps authenticating the app (and
// is returned by SigningSecrets) for KeyOverlap more, then never. A second
// rotation within the overlap ends the first one's previous secret at once.
func (s *Apps) RotateClientSecret(ctx context.Context, appID string) (Rotated, error) {
	var out Rotated
	err := s.InTx(ctx, func(s *Service) error {
		aid, err := s.lockApp(ctx, appID)
		if err != nil {
			return err
		}
		secret, _ := NewToken(PrefixClientSecret)
		until := s.now().Add(KeyOverlap).UTC().Truncate(time.Second)
		if _, err := s.q.RotateClientSecret(ctx, coredb.RotateClientSecretParams{ID: aid, ClientSecretHash: HashToken(secret),
			ClientSecretSealed: s.sealSecret(aid, secret), PreviousExpiresAt: pgtype.Timestamptz{Time: until, Valid: true}}); err != nil {
			return fmt.Errorf("rotate client secret: %w", err)
		}
		out = Rotated{Value: secret, PreviousExpiresAt: until}
		return nil
	})
	if err == nil {
		s.env.secrets.Add(1) // committed: see SecretGeneration
	}
	return out, err
}

// SigningSecrets are the client secrets a webhook body is signed with.
type SigningSecrets struct {
	// Current is the client secret now; "" when it was never sealed (an
	// app created while the Service had no Sealer).
	Current string
	// Previous is the secret before the last rotation while its overlap
	// lasts, else "".
	Previous string
	// PreviousExpiresAt is when Previous stops working.
	PreviousExpiresAt time.Time
}

// SealedSecrets are an app's client secrets as core.apps keeps them, sealed
// (client_secret_sealed, previous_secret_sealed, previous_secret_expires_at),
// for a reader that selects them with its own query: the webhook dispatcher
// reads them with each delivery it claims, so that signing costs no query of
// its own. core.apps is their one home; Open is the one way to read them.
type SealedSecrets struct {
	// Current is client_secret_sealed; nil when none was sealed.
	Current []byte
	// Previous is previous_secret_sealed; nil when none.
	Previous []byte
	// PreviousExpiresAt is previous_secret_expires_at; zero when none.
	PreviousExpiresAt time.Time
}

// Open opens the secrets of app appID with sealer: the current one, and the
// previous one while its overlap lasts at now.
func (s SealedSecrets) Open(sealer Sealer, appID int64, now time.Time) (SigningSecrets, error) {
	var out SigningSecrets
	var err error
	if s.Current != nil {
		if out.Current, err = openClientSecret(sealer, appID, s.Current); err != nil {
			return SigningSecrets{}, err
		}
	}
	if s.Previous != nil && now.Before(s.PreviousExpiresAt) {
		if out.Previous, err = openClientSecret(sealer, appID, s.Previous); err != nil {
			return SigningSecrets{}, err
		}
		out.PreviousExpiresAt = s.PreviousExpiresAt
	}
	return out, nil
}

// SigningSecrets returns the app's current client secret and, while a
// rotation's overlap lasts, the previous one: during the overlap a webhook
// is signed with both, so a receiver that still holds the old secret keeps
// verifying (CONTRACT §14). It needs a Sealer (SetSealer).
func (s *Apps) SigningSecrets(ctx context.Context, appID string) (SigningSecrets, error) {
	aid, err := mustID("app", appID)
	if err != nil {
		return SigningSecrets{}, err
	}
	if s.env.sealer == nil {
		return SigningSecrets{}, errors.New("identity: signing secrets: no sealer configured")
	}
	row, err := s.q.GetClientSecretsSealed(ctx, aid)
	if err != nil {
		return SigningSecrets{}, notFound(err, "app "+appID)
	}
	return SealedSecrets{Current: row.ClientSecretSealed, Previous: row.PreviousSecretSealed,
		PreviousExpiresAt: row.PreviousSecretExpiresAt.Time}.Open(s.env.sealer, aid, s.now())
}

// sealSecret seals an app's client secret, bound to the app; nil without a
// sealer.
func (s *store) sealSecret(appID int64, secret string) []byte {
	if s.env.sealer == nil {
		return nil
	}
	return s.env.sealer.Seal([]byte(secret), clientSecretContext(appID))
}

// openClientSecret opens one sealed client secret of app appID. A secret
// that migration 0104 moved from core.webhook_app_secrets (apps created
// before their secret was sealed in core.apps) is sealed under the webhook
// signer's former context, so that context is tried second.
func openClientSecret(sealer Sealer, appID int64, sealed []byte) (string, error) {
	plain, err := sealer.Open(sealed, clientSecretContext(appID))
	if err != nil {
		moved, movedErr := sealer.Open(sealed, movedWebhookSecretContext(appID))
		if movedErr != nil {
			return "", fmt.Errorf("open client secret of app %d: %w", appID, err)
		}
		plain = moved
	}
	return string(plain), nil
}

// clientSecretContext binds a sealed secret to its app: a sealed value
// copied to another app's row does not open.
func clientSecretContext(appID int64) string { return "client secret of app " + FormatID(appID) }

// movedWebhookSecretContext is the context core.webhook_app_secrets sealed
// its copies under, kept for the copies migration 0104 moved to core.apps.
func movedWebhookSecretContext(appID int64) string {
	return "webhook signing secret of app " + FormatID(appID)
}

// lockApp locks the app's row for the transaction, serialising changes to
// its team, keys and mode; ErrNotFound when there is no such app.
func (s *store) lockApp(ctx context.Context, appID string) (int64, error) {
	if s.tx == nil {
		return 0, errors.New("identity: lockApp outside a transaction")
	}
	aid, err := mustID("app", appID)
	if err != nil {
		return 0, err
	}
	if _, err := s.q.LockApp(ctx, aid); errors.Is(err, pgx.ErrNoRows) {
		return 0, fmt.Errorf("app %s: %w", appID, ErrNotFound)
	} else if err != nil {
		return 0, fmt.Errorf("lock app: %w", err)
	}
	return aid, nil
}
