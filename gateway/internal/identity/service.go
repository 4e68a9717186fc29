package identity

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/svcplatform/svc/gateway/internal/coredb"
	"github.com/svcplatform/svc/sdk"
)

// Errors callers can test with errors.Is.
var (
	// ErrNotFound: the user, Page, app or review does not exist.
	ErrNotFound = errors.New("identity: not found")
	// ErrWrongPassword: the username is unknown or the password does not match.
	ErrWrongPassword = errors.New("identity: wrong username or password")
	// ErrUsernameTaken: another user has this username (compared without case).
	ErrUsernameTaken = errors.New("identity: username taken")
	// ErrNotStaff: the acting user is not platform staff.
	ErrNotStaff = errors.New("identity: platform staff required")
	// ErrReviewRequired: the app cannot go live before App Review approved a scope.
	ErrReviewRequired = errors.New("identity: App Review approval required")
	// ErrInvalid: an argument is malformed (the message says which).
	ErrInvalid = errors.New("identity: invalid argument")
	// ErrLastAdmin: the change would leave the app's team without an Admin.
	ErrLastAdmin = errors.New("identity: the last Admin of an app cannot be removed")
	// ErrNotPending: a staff decision on a review that is not pending.
	ErrNotPending = errors.New("identity: the review is not pending")
	// ErrLimitReached: a self-service creation over its bound
	// (MaxTestUsersPerApp, MaxAppsPerUser); the message names the limit.
	ErrLimitReached = errors.New("identity: limit reached")
	// ErrTestUser: a Test User tried what only a real person may do
	// (create an app, whose own Test Users would multiply without bound).
	ErrTestUser = errors.New("identity: a Test User cannot do this")
)

// Service is the identity store: one pool, and the areas of what it holds,
// each a type of its own. Its methods, and its areas', are safe for
// concurrent use.
type Service struct {
	*store
	// Users are people: accounts, passwords, staff, the signed-in user's
	// summary, sign-up.
	Users *Users
	// Sessions are first-party sessions and the credentials they and the
	// OAuth server issue: sign-in, revocation, token debugging.
	Sessions *Sessions
	// Pages are Pages and the roles people hold on them, and what a caller
	// may do on a Page (PageFacts).
	Pages *Pages
	// Apps are apps: client secrets, redirect URIs, products, links to
	// Pages, team roles, Test Users, API keys and their rotation.
	Apps *Apps
	// Review is App Review per scope, and going live.
	Review *Review
	// Businesses are business portfolios: their people, assets and
	// verification.
	Businesses *Businesses
	// Partners is the partner program: registrations, measured criteria
	// and tiers.
	Partners *Partners
}

// Users holds people; see Service.Users.
type Users struct{ *store }

// Sessions holds sessions and credentials; see Service.Sessions.
type Sessions struct{ *store }

// Pages holds Pages and Page roles; see Service.Pages.
type Pages struct{ *store }

// Apps holds apps; see Service.Apps.
type Apps struct{ *store }

// Review holds App Review; see Service.Review.
type Review struct{ *store }

// store is what the areas share: the pool, or one transaction on it, the
// queries bound to either, and the state every copy shares.
type store struct {
	pool *pgxpool.Pool
	q    *coredb.Queries
	tx   pgx.Tx
	// signIn counts failed sign-ins and slots bounds password hashing;
	// both shared by transactional copies.
	signIn *signInGuard
	slots  *passwordSlots
	// env holds what the Service is configured with after New; shared by
	// transactional copies.
	env *env
	// all is the Service of this store, for an area's call to another.
	all *Service
}

// newService returns the Service whose areas share st.
func newService(st *store) *Service {
	s := &Service{store: st, Users: &Users{st}, Sessions: &Sessions{st}, Pages: &Pages{st}, Apps: &Apps{st}, Review: &Review{st}, Businesses: &Businesses{st}, Partners: &Partners{st}}
	st.all = s
	return s
}

// env is the Service's replaceable clock and its sealer.
type env struct {
	now    func() time.Time
	sealer Sealer
	// signUpClosed refuses SignUp (--signup closed).
	signUpClosed bool
	// scopes is the scope catalog's cache (scopes.go).
	scopes *scopeCache
	// checkupWake wakes the checkup reminders' loop (checkup.go).
	checkupWake chan struct{}
	// secrets counts the client secrets changed through this Service
	// (Apps.SecretGeneration).
	secrets atomic.Uint64
}

// Sealer encrypts secrets that must be read back in plain (the client
// secret signs webhooks). *secretbox.Box implements it.
type Sealer interface {
	Seal(plain []byte, context string) []byte
	Open(sealed []byte, context string) ([]byte, error)
}

// SetSealer makes the Service keep client secrets sealed with b, so that
// SigningSecrets can answer them; without one only hashes are kept. Call it
// before serving.
func (s *Service) SetSealer(b Sealer) { s.env.sealer = b }

// SetClock replaces the clock that decides key and secret overlaps, for
// tests that move time.
func (s *Service) SetClock(now func() time.Time) { s.env.now = now }

func (s *store) now() time.Time { return s.env.now() }

// New returns a Service over pool.
func New(pool *pgxpool.Pool) *Service {
	return newService(&store{pool: pool, q: coredb.New(pool), signIn: newSignInGuard(), slots: newPasswordSlots(),
		env: &env{now: time.Now, scopes: &scopeCache{local: map[string]Scope{}}, checkupWake: make(chan struct{}, 1)}})
}

// InTx runs fn with a Service whose every call, in every area, is part of
// one transaction, committed when fn returns nil. Nested calls join the
// outer transaction.
func (s *store) InTx(ctx context.Context, fn func(*Service) error) error {
	if s.tx != nil {
		return fn(s.all)
	}
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		return fn(newService(&store{pool: s.pool, q: s.q.WithTx(tx), tx: tx, signIn: s.signIn, slots: s.slots, env: s.env}))
	})
}

// Queries exposes the generated queries bound to this Service's pool or
// transaction, for packages that own other core tables (oauth, seed).
func (s *Service) Queries() *coredb.Queries { return s.q }

// Pool is the Service's pool, for a caller that sends several statements
// in one round trip (oauth's code redemptions).
func (s *Service) Pool() *pgxpool.Pool { return s.pool }

// FormatID writes a database id as the decimal string clients see.
func FormatID(id int64) string { return sdk.FormatID(id) }

// ParseID reads a decimal id (sdk.ParseID: canonical, positive). Anything
// else is not an id of ours; callers treat it as not found.
func ParseID(s string) (int64, bool) { return sdk.ParseID(s) }

func mustID(kind, s string) (int64, error) {
	id, ok := ParseID(s)
	if !ok {
		return 0, fmt.Errorf("%s %q: %w", kind, s, ErrNotFound)
	}
	return id, nil
}

// notFound maps pgx.ErrNoRows to ErrNotFound.
func notFound(err error, what string) error {
	if errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("%s: %w", what, ErrNotFound)
	}
	return fmt.Errorf("%s: %w", what, err)
}
