package oauth_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/svcplatform/svc/gateway/internal/oauth"
)

// browserResolve is what a browser does with a Location header: drop tabs
// and newlines, read backslashes as slashes, resolve against the page.
func browserResolve(t testing.TB, location string) *url.URL {
	t.Helper()
	cleaned := strings.NewReplacer("\t", "", "\n", "", "\r", "", "\\", "/").Replace(location)
	base, _ := url.Parse("https://svc.example/login")
	ref, err := url.Parse(cleaned)
	if err != nil {
		return base
	}
	return base.ResolveReference(ref)
}

func TestAfterSignInOnlySameOriginPathsAreFollowed(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		next string
		want string
	}{
		{"/oauth/authorize?client_id=1&state=x", "/oauth/authorize?client_id=1&state=x"},
		{"/developers/console", "/developers/console"},
		{"/a/b%20c", "/a/b%20c"},
		{"/.//evil.com", "/.//evil.com"}, // a path of this origin
		{"", ""},
		{"//evil.com", ""},
		{"///evil.com", ""},
		{"/\\evil.com", ""},
		{"\\\\evil.com", ""},
		{"/\t/evil.com", ""},
		{"/\n/evil.com", ""},
		{"/\r\n/evil.com", ""},
		{"/%09/evil.com", ""},
		{"/%2F/evil.com", ""},
		{"/%2f%2fevil.com", ""},
		{"/%5Cevil.com", ""},
		{"/%0d%0aSet-Cookie:x=1", ""},
		{"/x?%0d%0aSet-Cookie:x=1", ""},
		{"https://evil.com", ""},
		{"http:/evil.com", ""},
		{"javascript:alert(1)", ""},
		{"evil.com", ""},
		{" /x", ""},
		{"/x\x00", ""},
		{"/x\u0085", ""},
		{"/" + strings.Repeat("a", 3000), ""},
	} {
		if got := oauth.SafeNext(tc.next); got != tc.want {
			t.Errorf("safeNext(%q) = %q, want %q", tc.next, got, tc.want)
		}
	}
}

func FuzzSafeNextNeverLeavesTheOrigin(f *testing.F) {
	for _, s := range []string{"/", "//evil.com", "/\t/evil.com", "/%09/evil.com", "/\\evil", "/a?b=c#d", "https://x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, next string) {
		got := oauth.SafeNext(next)
		if got == "" {
			return
		}
		if u := browserResolve(t, got); u.Host != "svc.example" || u.Scheme != "https" {
			t.Fatalf("safeNext(%q) = %q leads a browser to %s", next, got, u)
		}
	})
}
