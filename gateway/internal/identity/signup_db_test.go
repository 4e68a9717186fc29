package identity_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/svcplatform/svc/gateway/internal/identity"
	"github.com/svcplatform/svc/gateway/internal/identity/identitytest"
)

// A sign-up opens a session for the new account, which signs in with its
// password afterwards; the account is no staff.
func TestSignUpCreatesAnAccountThatSignsIn(t *testing.T) {
	t.Parallel()
	w := identitytest.NewWorld(t)
	ctx := context.Background()
	u, sess, err := w.IDs.Users.SignUp(ctx, "192.0.2.1", identity.NewUser{Username: "newcomer", Name: " Nia Newcomer ", Password: "a fine long password"})
	if err != nil {
		t.Fatal(err)
	}
	if u.Username != "newcomer" || u.Name != "Nia Newcomer" || u.Staff || sess.UserID != u.ID || sess.Token == "" {
		t.Fatalf("SignUp = %+v, %+v", u, sess)
	}
	if _, err := w.IDs.Sessions.SignIn(ctx, "192.0.2.1", "newcomer", "a fine long password"); err != nil {
		t.Fatalf("sign in after sign-up: %v", err)
	}
}

// A taken username is known only after the password was hashed, as a new
// account's would be: with every hashing slot busy, the taken name waits
// for one like any sign-up (and is then told the server is busy), instead
// of being refused at once.
func TestATakenUsernameIsAnsweredOnlyAfterTheHashingANewAccountCosts(t *testing.T) {
	t.Parallel()
	w := identitytest.NewWorld(t)
	ctx := context.Background()
	release := identity.HoldHashingSlots(w.IDs, 200*time.Millisecond)
	start := time.Now()
	_, _, err := w.IDs.Users.SignUp(ctx, "192.0.2.2", identity.NewUser{Username: w.Owner.Username, Password: "a fine long password"})
	var te *identity.ThrottledError
	if !errors.As(err, &te) || te.Scope != "server" || time.Since(start) < 200*time.Millisecond {
		t.Fatalf("taken name with the slots busy: %v after %s, want a wait for a slot", err, time.Since(start))
	}
	release()
	_, _, err = w.IDs.Users.SignUp(ctx, "192.0.2.2", identity.NewUser{Username: w.Owner.Username, Password: "a fine long password"})
	var fe *identity.FieldError
	if !errors.As(err, &fe) || fe.Field != "username" || !errors.Is(err, identity.ErrUsernameTaken) {
		t.Fatalf("taken name: %v, want a refusal naming username", err)
	}
}

func TestClosedSignUpRefusesEveryone(t *testing.T) {
	t.Parallel()
	w := identitytest.NewWorld(t)
	w.IDs.SetSignUpOpen(false)
	if _, _, err := w.IDs.Users.SignUp(context.Background(), "192.0.2.3", identity.NewUser{Username: "newcomer", Password: "a fine long password"}); !errors.Is(err, identity.ErrSignUpClosed) {
		t.Fatalf("closed sign-up: %v", err)
	}
}
