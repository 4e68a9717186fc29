package auth_test

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/svcplatform/svc/gateway/internal/auth"
)

func TestTheAuthorizationHeaderIsReadTheSameWayEverywhere(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		header  string
		token   string
		present bool
	}{
		{"", "", false},
		{"Bearer abc", "abc", true},
		{"bearer abc", "abc", true},
		{"BEARER abc", "abc", true}, // RFC 6750: the scheme is case-insensitive
		{"  Bearer   abc  ", "abc", true},
		{"Bearer", "", true},
		{"Bearer ", "", true},
		{"Basic dXNlcjpwdw==", "", true},
		{"abc", "", true},
	} {
		r := httptest.NewRequest("GET", "/", nil)
		if c.header != "" {
			r.Header.Set("Authorization", c.header)
		}
		token, present := auth.BearerToken(r)
		if token != c.token || present != c.present {
			t.Errorf("%q: %q %v, want %q %v", c.header, token, present, c.token, c.present)
		}
	}
}

// FuzzBearerToken: a token read is never empty-but-absent, carries no
// surrounding space, and stands in the header.
func FuzzBearerToken(f *testing.F) {
	for _, s := range []string{"Bearer abc", "bearer  x ", "Basic y", "Bearer", "", " \t"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, h string) {
		r := httptest.NewRequest("GET", "/", nil)
		r.Header["Authorization"] = []string{h}
		token, present := auth.BearerToken(r)
		if h == "" && present {
			t.Fatal("an empty header counts as present")
		}
		if token != strings.TrimSpace(token) || !strings.Contains(h, token) {
			t.Fatalf("%q read as %q", h, token)
		}
	})
}
