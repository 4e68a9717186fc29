package oauth_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"
	"golang.org/x/oauth2"

	"github.com/svcplatform/svc/gateway/internal/coredb"
	"github.com/svcplatform/svc/gateway/internal/identity"
	"github.com/svcplatform/svc/gateway/internal/identity/identitytest"
	"github.com/svcplatform/svc/gateway/internal/oauth"
)

// waitBlockedOrDone returns once done is closed or a statement matching
// like is waiting for a lock; it gives up after 10 s.
func waitBlockedOrDone(t *testing.T, pool *pgxpool.Pool, like string, done <-chan struct{}) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-done:
			return
		default:
		}
		var waiting bool
		err := pool.QueryRow(context.Background(), `SELECT EXISTS (SELECT 1 FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE $1)`, like).Scan(&waiting)
		if err != nil {
			t.Fatal(err)
		}
		if waiting {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatal("the statement neither finished nor waited for a lock")
}

// issueCode stores a code for the World's owner and app, as the consent
// page would.
func issueCode(t *testing.T, b *bundle) (code, verifier string) {
	t.Helper()
	verifier = oauth2.GenerateVerifier()
	code, err := b.as.IssueCode(context.Background(), b.App.ID, b.Owner.ID, identitytest.RedirectURI, oauth.S256(verifier), []string{"public_profile"})
	if err != nil {
		t.Fatal(err)
	}
	return code, verifier
}

// holdRedemption redeems code in a transaction left open (rolled back at
// the test's end unless committed), returning it and the tokens it issued.
func holdRedemption(t *testing.T, b *bundle, code, verifier string) (tx pgx.Tx, access string, accessHash, refreshHash []byte) {
	t.Helper()
	ctx := context.Background()
	appID, _ := identity.ParseID(b.App.ID)
	access, accessHash = identity.NewToken(identity.PrefixAccessToken)
	_, refreshHash = identity.NewToken(identity.PrefixRefreshToken)
	expires := pgtype.Timestamptz{Time: time.Now().Add(time.Hour), Valid: true}
	tx, err := b.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tx.Rollback(context.Background()) })
	if _, err := coredb.New(tx).RedeemCode(ctx, coredb.RedeemCodeParams{CodeHash: identity.HashToken(code), AppID: appID,
		RedirectUri: identitytest.RedirectURI, CodeChallenge: oauth.S256(verifier), AccessHash: accessHash,
		AccessExpiresAt: expires, RefreshHash: refreshHash, RefreshExpiresAt: expires}); err != nil {
		t.Fatal(err)
	}
	return tx, access, accessHash, refreshHash
}

func grantOfCode(t *testing.T, pool *pgxpool.Pool, code string) int64 {
	t.Helper()
	var id int64
	if err := pool.QueryRow(context.Background(), `SELECT grant_id FROM core.oauth_codes WHERE code_hash = $1`,
		identity.HashToken(code)).Scan(&id); err != nil {
		t.Fatal(err)
	}
	return id
}

// A revocation that has written but not committed when the code is
// exchanged: the exchange waits for it and is refused, so no token outlives
// the revocation.
func TestAnExchangeDuringARevocationIssuesNoLiveToken(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	code, verifier := issueCode(t, b)
	tx, err := b.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := oauth.RevokeFamily(ctx, coredb.New(tx), grantOfCode(t, b.Pool, code)); err != nil {
		t.Fatal(err)
	}

	var status int
	var body map[string]any
	var xerr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		status, body, xerr = exchangeCode(b, code, verifier)
	}()
	waitBlockedOrDone(t, b.Pool, "%oauth_codes%", done)
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	<-done
	if xerr != nil {
		t.Fatal(xerr)
	}
	if status == 200 {
		access, _ := body["access_token"].(string)
		if _, err := b.authn.AuthenticateToken(ctx, access); err == nil {
			t.Fatal("a token issued during the revocation is live after it")
		}
	}
	if status != 400 || body["error"] != "invalid_grant" {
		t.Errorf("exchange during a revocation: %d %v, want 400 invalid_grant", status, body)
	}
}

// A redemption that has written but not committed when its grant is
// revoked: the revocation waits for it and then revokes what it issued.
func TestARevocationDuringAnExchangeRevokesWhatItIssued(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	code, verifier := issueCode(t, b)
	grant := grantOfCode(t, b.Pool, code)
	tx, access, accessHash, refreshHash := holdRedemption(t, b, code, verifier)

	var rerr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		rerr = pgx.BeginFunc(ctx, b.Pool, func(rtx pgx.Tx) error {
			_, err := oauth.RevokeFamily(ctx, coredb.New(rtx), grant)
			return err
		})
	}()
	waitBlockedOrDone(t, b.Pool, "%UPDATE core.oauth_grants%", done)
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	<-done
	if rerr != nil {
		t.Fatal(rerr)
	}
	var accessRevoked, refreshRevoked bool
	if err := b.Pool.QueryRow(ctx, `SELECT
		(SELECT revoked_at IS NOT NULL FROM core.credentials WHERE token_hash = $1),
		(SELECT revoked_at IS NOT NULL FROM core.oauth_refresh_tokens WHERE token_hash = $2)`,
		accessHash, refreshHash).Scan(&accessRevoked, &refreshRevoked); err != nil {
		t.Fatal(err)
	}
	if !accessRevoked || !refreshRevoked {
		t.Errorf("after the revocation: access token revoked %v, refresh token revoked %v; want both", accessRevoked, refreshRevoked)
	}
	if _, err := b.authn.AuthenticateToken(ctx, access); err == nil {
		t.Error("the access token issued before the revocation committed is live after it")
	}
}

func countTokensOfGrant(t *testing.T, pool *pgxpool.Pool, grant int64) int {
	t.Helper()
	var n int
	if err := pool.QueryRow(context.Background(), `SELECT
		(SELECT count(*) FROM core.credentials WHERE grant_id = $1) +
		(SELECT count(*) FROM core.oauth_refresh_tokens WHERE grant_id = $1)`, grant).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// A grant's tokens go with it, and the grant goes with its app.
func TestTokensAreDeletedWithTheirGrant(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	var grants []int64
	for range 2 {
		code, verifier := issueCode(t, b)
		grants = append(grants, grantOfCode(t, b.Pool, code))
		if status, body, err := exchangeCode(b, code, verifier); err != nil || status != 200 {
			t.Fatalf("exchange: %d %v %v", status, body, err)
		}
		if n := countTokensOfGrant(t, b.Pool, grants[len(grants)-1]); n != 2 {
			t.Fatalf("%d tokens after an exchange, want 2", n)
		}
	}
	if _, err := b.Pool.Exec(ctx, `DELETE FROM core.oauth_grants WHERE id = $1`, grants[0]); err != nil {
		t.Fatal(err)
	}
	if n := countTokensOfGrant(t, b.Pool, grants[0]); n != 0 {
		t.Errorf("%d tokens of a deleted grant", n)
	}
	if n := countTokensOfGrant(t, b.Pool, grants[1]); n != 2 {
		t.Errorf("another grant's deletion left %d of its 2 tokens", n)
	}
	appID, _ := identity.ParseID(b.App.ID)
	if _, err := b.Pool.Exec(ctx, `DELETE FROM core.apps WHERE id = $1`, appID); err != nil {
		t.Fatal(err)
	}
	if n := countTokensOfGrant(t, b.Pool, grants[1]); n != 0 {
		t.Errorf("%d tokens of a deleted app's grant", n)
	}
}

// A grant deleted while its code is being redeemed: the deletion waits for
// the redemption and then deletes what it issued.
func TestADeletionDuringAnExchangeDeletesWhatItIssued(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	code, verifier := issueCode(t, b)
	grant := grantOfCode(t, b.Pool, code)
	tx, _, _, _ := holdRedemption(t, b, code, verifier)
	var derr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, derr = b.Pool.Exec(ctx, `DELETE FROM core.oauth_grants WHERE id = $1`, grant)
	}()
	waitBlockedOrDone(t, b.Pool, "DELETE FROM core.oauth_grants%", done)
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	<-done
	if derr != nil {
		t.Fatal(derr)
	}
	if n := countTokensOfGrant(t, b.Pool, grant); n != 0 {
		t.Errorf("%d tokens issued while their grant was deleted outlived it", n)
	}
}
