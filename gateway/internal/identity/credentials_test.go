package identity_test

import (
	"context"
	"testing"

	"github.com/svcplatform/svc/gateway/internal/identity"
	"github.com/svcplatform/svc/gateway/internal/identity/identitytest"
)

// A credential issued from a grant reaches its app and user only through
// the grant (migration 0265: no lock on the app's and user's rows at each
// exchange); credentials outside any grant keep their own foreign keys. So
// whatever the path, deleting a user or an app deletes every credential and
// refresh token of theirs, and a credential outside a grant still cannot
// name an app or user that does not exist.
func TestCredentialsGoWithTheirUserAppOrGrant(t *testing.T) {
	t.Parallel()
	w := identitytest.NewWorld(t)
	ctx := context.Background()
	appID, _ := identity.ParseID(w.App.ID)
	consumerID, _ := identity.ParseID(w.Consumer.ID)
	ownerID, _ := identity.ParseID(w.Owner.ID)

	// count answers how many credentials and refresh tokens have the hashes.
	count := func(hashes ...[]byte) int {
		t.Helper()
		var n int
		if err := w.Pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM core.credentials WHERE token_hash = ANY($1))
			+ (SELECT count(*) FROM core.oauth_refresh_tokens WHERE token_hash = ANY($1))`, hashes).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	// tokens issues an access and a refresh token from a new grant of the
	// app to the user, as a code exchange does.
	tokens := func(userID int64) (access, refresh []byte) {
		t.Helper()
		_, access = identity.NewToken(identity.PrefixAccessToken)
		_, refresh = identity.NewToken(identity.PrefixRefreshToken)
		if _, err := w.Pool.Exec(ctx, `WITH g AS (
			INSERT INTO core.oauth_grants (app_id, user_id, scopes) VALUES ($1, $2, '{public_profile}') RETURNING id
		), a AS (
			INSERT INTO core.credentials (token_hash, kind, app_id, user_id, scopes, grant_id, expires_at)
			SELECT $3, 1, $1, $2, '{public_profile}', g.id, now() + interval '1 hour' FROM g
		)
		INSERT INTO core.oauth_refresh_tokens (token_hash, grant_id, app_id, user_id, scopes, expires_at)
		SELECT $4, g.id, $1, $2, '{public_profile}', now() + interval '1 hour' FROM g`,
			appID, userID, access, refresh); err != nil {
			t.Fatal(err)
		}
		return access, refresh
	}

	session, err := w.IDs.Sessions.CreateSession(ctx, w.Consumer.ID)
	if err != nil {
		t.Fatal(err)
	}
	consumerAccess, consumerRefresh := tokens(consumerID)
	ownerAccess, ownerRefresh := tokens(ownerID)
	key, err := w.IDs.Apps.CreateAppKey(ctx, w.App.ID)
	if err != nil {
		t.Fatal(err)
	}

	if _, err := w.Pool.Exec(ctx, `DELETE FROM core.users WHERE id = $1`, consumerID); err != nil {
		t.Fatal(err)
	}
	if n := count(identity.HashToken(session.Token), consumerAccess, consumerRefresh); n != 0 {
		t.Fatalf("%d of the deleted user's session, access and refresh tokens remain", n)
	}
	if n := count(ownerAccess, ownerRefresh, identity.HashToken(key)); n != 3 {
		t.Fatalf("%d of 3 other credentials remain after deleting a user", n)
	}

	if _, err := w.Pool.Exec(ctx, `DELETE FROM core.apps WHERE id = $1`, appID); err != nil {
		t.Fatal(err)
	}
	if n := count(ownerAccess, ownerRefresh, identity.HashToken(key)); n != 0 {
		t.Fatalf("%d of the deleted app's key, access and refresh tokens remain", n)
	}

	// Refused: a session of a user, or a key of an app, that does not exist.
	if _, err := w.IDs.Sessions.CreateSession(ctx, w.Consumer.ID); err == nil {
		t.Fatal("a session was created for a deleted user")
	}
	_, hash := identity.NewToken(identity.PrefixTestKey)
	if _, err := w.Pool.Exec(ctx, `INSERT INTO core.credentials (token_hash, kind, app_id) VALUES ($1, 3, $2)`, hash, appID); err == nil {
		t.Fatal("an app key was stored for a deleted app")
	}
}

// Leaving names every live bearer credential of the person for the caches
// to forget: their sessions (found by owner) and the access tokens of their
// grants (found through the grant, migration 0266) — and no one else's.
func TestLeavingNamesThePersonsSessionsAndGrantTokensForTheCaches(t *testing.T) {
	t.Parallel()
	w := identitytest.NewWorld(t)
	ctx := context.Background()
	appID, _ := identity.ParseID(w.App.ID)
	grantToken := func(userID string) []byte {
		t.Helper()
		uid, _ := identity.ParseID(userID)
		_, access := identity.NewToken(identity.PrefixAccessToken)
		if _, err := w.Pool.Exec(ctx, `WITH g AS (
			INSERT INTO core.oauth_grants (app_id, user_id, scopes) VALUES ($1, $2, '{public_profile}') RETURNING id
		)
		INSERT INTO core.credentials (token_hash, kind, app_id, user_id, scopes, grant_id, expires_at)
		SELECT $3, 1, $1, $2, '{public_profile}', g.id, now() + interval '1 hour' FROM g`,
			appID, uid, access); err != nil {
			t.Fatal(err)
		}
		return access
	}
	session, err := w.IDs.Sessions.CreateSession(ctx, w.Consumer.ID)
	if err != nil {
		t.Fatal(err)
	}
	mine, others := grantToken(w.Consumer.ID), grantToken(w.Owner.ID)
	left, err := w.IDs.Users.Leave(ctx, w.Consumer.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{string(identity.HashToken(session.Token)): true, string(mine): true}
	for _, h := range left.Revoked {
		if string(h) == string(others) {
			t.Fatal("leaving named another person's token")
		}
		delete(want, string(h))
	}
	if len(want) != 0 {
		t.Fatalf("leaving named %d credentials; %d of the person's two (session, grant token) missing", len(left.Revoked), len(want))
	}
}
