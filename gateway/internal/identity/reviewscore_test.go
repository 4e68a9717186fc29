package identity_test

import (
	"strings"
	"testing"

	"github.com/svcplatform/svc/gateway/internal/identity"
)

// A use case that explains itself: 200+ code points, names the data of
// public_profile and pages:read, and does not repeat itself.
const goodUseCase = "Orders Bot greets each customer by name from the public profile and lists the Pages " +
	"the merchant manages so that she can choose which shop answers order questions. We never store " +
	"profile data beyond the session and delete it when the merchant disconnects."

func TestReviewScoreRules(t *testing.T) {
	t.Parallel()
	privacy := "https://orders.example/privacy"
	basic := []string{identity.ScopePublicProfile, identity.ScopePagesRead}
	for _, tc := range []struct {
		name      string
		sub       identity.ReviewSubmission
		want      int
		shortfall string
	}{
		{"a full submission scores 100", identity.ReviewSubmission{Scopes: basic, UseCase: goodUseCase, PrivacyPolicyURL: privacy}, 100, ""},
		{"without a privacy policy it scores 75 and fails", identity.ReviewSubmission{Scopes: basic, UseCase: goodUseCase}, 75, "privacy policy"},
		{"a privacy policy over plain http does not count", identity.ReviewSubmission{Scopes: basic, UseCase: goodUseCase, PrivacyPolicyURL: "http://orders.example/privacy"}, 75, "privacy policy"},
		{"a relative privacy policy URL does not count", identity.ReviewSubmission{Scopes: basic, UseCase: goodUseCase, PrivacyPolicyURL: "/privacy"}, 75, "privacy policy"},
		{"a use case of 100 to 199 code points scores 25 for length and passes at 90", identity.ReviewSubmission{Scopes: basic,
			UseCase: goodUseCase[:150], PrivacyPolicyURL: privacy}, 90, ""},
		{"a use case of 40 to 99 code points scores 10 for length and fails", identity.ReviewSubmission{Scopes: basic,
			UseCase: "Greets customers by name and lists the Pages they manage today.", PrivacyPolicyURL: privacy}, 55, "shorter than 100"},
		{"a use case that does not name the data of a scope loses 20", identity.ReviewSubmission{Scopes: []string{identity.ScopePagesRead},
			UseCase: strings.ReplaceAll(strings.ReplaceAll(goodUseCase, "Pages", "shops"), "page", "shop"), PrivacyPolicyURL: privacy}, 80, "pages:read"},
		{"length is counted in code points, not bytes", identity.ReviewSubmission{Scopes: []string{identity.ScopePublicProfile},
			UseCase: "name " + strings.Repeat("é", 60) + " profile", PrivacyPolicyURL: privacy}, 55, "distinct words"},
		{"a use case that repeats itself loses 20", identity.ReviewSubmission{Scopes: basic,
			UseCase: strings.Repeat("page name profile data ", 20), PrivacyPolicyURL: privacy}, 80, "repeats itself"},
		{"an empty submission scores 20 (no basic scope to name)", identity.ReviewSubmission{}, 20, "privacy policy"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, short := identity.ReviewScore(tc.sub)
			if got != tc.want {
				t.Fatalf("score = %d (%v), want %d", got, short, tc.want)
			}
			if tc.shortfall == "" && len(short) != 0 && got == 100 {
				t.Fatalf("a full score with shortfalls %v", short)
			}
			if tc.shortfall != "" && !strings.Contains(strings.Join(short, "; "), tc.shortfall) {
				t.Fatalf("shortfalls %v do not mention %q", short, tc.shortfall)
			}
			if pass := got >= identity.AutoReviewMinScore; pass != (got >= 85) {
				t.Fatal("the pass mark moved")
			}
		})
	}
}

func FuzzReviewScore(f *testing.F) {
	f.Add(goodUseCase, "https://orders.example/privacy", "public_profile")
	f.Add("", "", "")
	f.Add("\xff\xfe page", "https://[::1", "pages:read")
	f.Add(strings.Repeat("ab ", 3000), "https://x", "svcchat:send")
	f.Fuzz(func(t *testing.T, useCase, privacy, scope string) {
		sub := identity.ReviewSubmission{Scopes: []string{scope}, UseCase: useCase, PrivacyPolicyURL: privacy}
		score, short := identity.ReviewScore(sub)
		if score < 0 || score > 100 {
			t.Fatalf("score %d out of 0..100", score)
		}
		if (score == 100) != (len(short) == 0) {
			t.Fatalf("score %d with shortfalls %v", score, short)
		}
		if again, _ := identity.ReviewScore(sub); again != score {
			t.Fatalf("not deterministic: %d then %d", score, again)
		}
	})
}

func FuzzValidRedirectURI(f *testing.F) {
	for _, s := range []string{"https://a.example/cb", "http://127.0.0.1:9/cb", "http://evil.example/cb", "https://a/cb#f",
		"com.example.app:/cb", "", "%zz", "https://", "http://[::1]:80/x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		if identity.ValidRedirectURI(raw) != nil {
			return
		}
		if strings.Contains(raw, "#") {
			t.Fatalf("%q with a fragment was accepted", raw)
		}
		if strings.HasPrefix(strings.ToLower(raw), "http:") && !strings.Contains(raw, "127.0.0.1") &&
			!strings.Contains(raw, "localhost") && !strings.Contains(raw, "[::1]") {
			t.Fatalf("%q: plain http off loopback was accepted", raw)
		}
	})
}
