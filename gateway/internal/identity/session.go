package identity

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/svcplatform/svc/gateway/internal/coredb"
	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
)

// Session is a first-party session: the mobile app's bearer token and the
// console's (and the login page's) cookie.
type Session struct {
	Token     string
	UserID    string
	ExpiresAt time.Time
}

// SignIn checks a username and password and opens a session.
//
// from is the client's address. Failures are limited per account and per
// address (signInGuard), and password checks run in the bounded hashing
// slots; a refusal for a limit is a *ThrottledError.
func (s *Sessions) SignIn(ctx context.Context, from, username, password string) (Session, error) {
	account := normalUsername(username)
	if err := s.signIn.admit(account); err != nil {
		return Session{}, err
	}
	var (
		u   User
		err error
	)
	if serr := s.slots.run(ctx, func() { u, err = s.all.Users.CheckCredentials(ctx, username, password) }); serr != nil {
		return Session{}, serr
	}
	if errors.Is(err, ErrWrongPassword) {
		if terr := s.signIn.failed(from, account); terr != nil {
			return Session{}, terr
		}
		return Session{}, err
	}
	if err != nil {
		return Session{}, err
	}
	s.signIn.succeeded(account)
	return s.CreateSession(ctx, u.ID)
}

// CreateSession opens a session for the user, valid for SessionTTL.
func (s *Sessions) CreateSession(ctx context.Context, userID string) (Session, error) {
	uid, err := mustID("user", userID)
	if err != nil {
		return Session{}, err
	}
	plain, hash := NewToken(PrefixSessionToken)
	exp := time.Now().Add(SessionTTL).UTC().Truncate(time.Second)
	if err := s.q.InsertCredential(ctx, coredb.InsertCredentialParams{TokenHash: hash,
		Kind: int16(pluginv1.TokenKind_TOKEN_KIND_SESSION), UserID: &uid, Scopes: []string{},
		ExpiresAt: pgtype.Timestamptz{Time: exp, Valid: true}}); err != nil {
		return Session{}, notFound(err, "create session")
	}
	return Session{Token: plain, UserID: userID, ExpiresAt: exp}, nil
}

// RevokeCredential revokes any bearer credential (session, app key, access
// token, system user token) given in plain. It reports whether there was a
// live credential to revoke. Callers that cache authentications use
// auth.Authenticator.Revoke, which also forgets the cached entry.
func (s *Sessions) RevokeCredential(ctx context.Context, token string) (bool, error) {
	_, err := s.q.RevokeCredential(ctx, HashToken(token))
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("revoke credential: %w", err)
	}
	return true, nil
}
