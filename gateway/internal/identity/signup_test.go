package identity

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func fieldOf(err error) string {
	var fe *FieldError
	if errors.As(err, &fe) {
		return fe.Field
	}
	return ""
}

func TestSignUpUsernamesAreThreeToSixtyFourOfLowerCaseLettersDigitsDotUnderscoreAndHyphen(t *testing.T) {
	t.Parallel()
	for _, ok := range []string{"abc", "olivia.o", "a_b-c.9", strings.Repeat("x", 64)} {
		if err := CheckUsername(ok); err != nil {
			t.Errorf("%q refused: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "ab", strings.Repeat("x", 65), "Olivia", "oli via", "olivia!", "olívia", "ol/ivia", " olivia"} {
		err := CheckUsername(bad)
		if fieldOf(err) != "username" || !errors.Is(err, ErrInvalid) {
			t.Errorf("%q: %v, want a refusal naming username", bad, err)
		}
	}
}

func TestSignUpPasswordsHaveTenCodePointsAndAreNotCommon(t *testing.T) {
	t.Parallel()
	for _, ok := range []string{"correct horse battery", "ÿÿÿÿÿÿÿÿÿÿ", "x7#kq9!mzp"} {
		if err := CheckNewPassword("olivia", ok); err != nil {
			t.Errorf("%q refused: %v", ok, err)
		}
	}
	// Ten code points that are more than ten bytes count as ten; nine
	// multi-byte ones are too short even though they are 18 bytes.
	for _, bad := range []string{"short", "ÿÿÿÿÿÿÿÿÿ", "qwertyuiop", "Password123", "BASKETBALL", "olivia.olivia", strings.Repeat("a", maxPasswordBytes+1)} {
		user := "olivia"
		if bad == "olivia.olivia" {
			user = bad
		}
		if err := CheckNewPassword(user, bad); fieldOf(err) != "password" {
			t.Errorf("%q: %v, want a refusal naming password", bad, err)
		}
	}
}

func TestTheCommonPasswordListIsEmbeddedAndHoldsOnlyPasswordsTheLengthRuleLetThrough(t *testing.T) {
	t.Parallel()
	if len(commonPasswords) < 100 {
		t.Fatalf("only %d common passwords embedded", len(commonPasswords))
	}
	for p := range commonPasswords {
		if len([]rune(p)) < MinPasswordRunes {
			t.Errorf("%q is shorter than the length rule: it could never match", p)
		}
	}
}

func TestSignUpsFromOneAddressAreLimitedPerHour(t *testing.T) {
	t.Parallel()
	g := newSignInGuard()
	clock := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	g.now = func() time.Time { return clock }
	for i := range addressSignUps {
		if err := g.signUp("198.51.100.7"); err != nil {
			t.Fatalf("sign-up %d refused: %v", i+1, err)
		}
		clock = clock.Add(time.Minute)
	}
	err := g.signUp("198.51.100.7")
	var te *ThrottledError
	if !errors.As(err, &te) || te.Scope != "signup" {
		t.Fatalf("sign-up %d: %v, want a signup throttle", addressSignUps+1, err)
	}
	if want := signUpWindow - addressSignUps*time.Minute; te.RetryAfter != want {
		t.Fatalf("RetryAfter = %s, want %s", te.RetryAfter, want)
	}
	if err := g.signUp("198.51.100.8"); err != nil {
		t.Fatalf("another address is not limited: %v", err)
	}
	clock = clock.Add(te.RetryAfter)
	if err := g.signUp("198.51.100.7"); err != nil {
		t.Fatalf("after the oldest left the window: %v", err)
	}
}
