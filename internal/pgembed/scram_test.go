package pgembed

import (
	"regexp"
	"testing"
)

var scramForm = regexp.MustCompile(`^SCRAM-SHA-256\$4096:[A-Za-z0-9+/=]{24}\$[A-Za-z0-9+/=]{44}:[A-Za-z0-9+/=]{44}$`)

// The verifier has the form PostgreSQL stores and parses (whether the server
// accepts the password it was made from is tested with a real server, in
// the gateway's store tests), and a fresh salt each time.
func FuzzScramVerifierHasPostgreSQLsForm(f *testing.F) {
	f.Add("password")
	f.Add("")
	f.Add("pässwörd ✓")
	f.Fuzz(func(t *testing.T, pw string) {
		a, err := ScramVerifier(pw)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := ScramVerifier(pw)
		if !scramForm.MatchString(a) || a == b {
			t.Fatalf("verifiers %q and %q", a, b)
		}
	})
}
