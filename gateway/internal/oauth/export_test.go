package oauth

import (
	"context"

	"github.com/jackc/pgx/v5/pgtype"

	"github.com/svcplatform/svc/gateway/internal/coredb"
	"github.com/svcplatform/svc/gateway/internal/identity"
)

// IssueCode stores an authorization code as the consent page would, for
// benchmarks that measure the exchange alone.
func (s *Server) IssueCode(ctx context.Context, appID, userID, redirectURI, challenge string, scopes []string) (string, error) {
	aid, _ := identity.ParseID(appID)
	uid, _ := identity.ParseID(userID)
	plain, hash := identity.NewToken(identity.PrefixAuthCode)
	now := s.now()
	err := s.ids.InTx(ctx, func(tx *identity.Service) error {
		grant, err := tx.Queries().CreateGrant(ctx, coredb.CreateGrantParams{AppID: aid, UserID: &uid, Scopes: scopes})
		if err != nil {
			return err
		}
		return tx.Queries().InsertCode(ctx, coredb.InsertCodeParams{CodeHash: hash, GrantID: grant, AppID: aid, UserID: uid,
			RedirectUri: redirectURI, Scopes: scopes, CodeChallenge: challenge,
			AuthTime: pgtype.Timestamptz{Time: now, Valid: true}, ExpiresAt: pgtype.Timestamptz{Time: now.Add(identity.CodeTTL), Valid: true}})
	})
	return plain, err
}

// SafeNext exposes the post-sign-in redirect filter to its table test and
// fuzz target.
var SafeNext = safeNext

// RedeemedTogether is how many redemptions went in batches of several.
func (s *Server) RedeemedTogether() int64 { return s.redeems.Together() }

// RevokeFamily is what every revocation of a grant writes, for the tests of
// its race with a redemption.
var RevokeFamily = revokeFamily
