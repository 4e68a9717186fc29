package oauth_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"golang.org/x/oauth2"

	"github.com/svcplatform/svc/gateway/internal/identity/identitytest"
	"github.com/svcplatform/svc/gateway/internal/oauth"
)

// Exchanges that arrive together are redeemed in one statement; each code
// still works once, for its own verifier only, and a code presented twice
// at once is honoured once and revokes what it was honoured with.
func TestConcurrentExchangesKeepEachCodesRules(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	verifier := oauth2.GenerateVerifier()
	issue := func() string {
		t.Helper()
		code, err := b.as.IssueCode(ctx, b.App.ID, b.Owner.ID, identitytest.RedirectURI, oauth.S256(verifier), []string{"public_profile"})
		if err != nil {
			t.Fatal(err)
		}
		return code
	}
	const good = 30
	type exchange struct {
		code, verifier string
		status         int
		body           map[string]any
		err            error
	}
	var all []*exchange
	for range good {
		all = append(all, &exchange{code: issue(), verifier: verifier})
	}
	wrongVerifier := &exchange{code: issue(), verifier: oauth2.GenerateVerifier()}
	twice := issue()
	first, second := &exchange{code: twice, verifier: verifier}, &exchange{code: twice, verifier: verifier}
	all = append(all, wrongVerifier, first, second)

	// Several rounds, all at once each, until batches of several were seen.
	for round := 0; round == 0 || (round < 5 && b.as.RedeemedTogether() == 0); round++ {
		if round > 0 {
			for _, e := range all[:good] {
				e.code = issue()
			}
		}
		var wg sync.WaitGroup
		start := make(chan struct{})
		for _, e := range all {
			if round > 0 && (e == wrongVerifier || e == first || e == second) {
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				e.status, e.body, e.err = exchangeCode(b, e.code, e.verifier)
			}()
		}
		close(start)
		wg.Wait()
		for _, e := range all {
			if e.err != nil {
				t.Fatal(e.err)
			}
		}
		for i, e := range all[:good] {
			if e.status != 200 {
				t.Fatalf("round %d, exchange %d: %d %v", round, i, e.status, e.body)
			}
			if _, err := b.authn.AuthenticateToken(ctx, e.body["access_token"].(string)); err != nil {
				t.Fatalf("round %d, exchange %d: its access token: %v", round, i, err)
			}
		}
	}
	if b.as.RedeemedTogether() == 0 {
		t.Fatal("no exchanges were redeemed together")
	}
	if wrongVerifier.status != 400 || wrongVerifier.body["error"] != "invalid_grant" {
		t.Errorf("a code with another verifier: %d %v", wrongVerifier.status, wrongVerifier.body)
	}
	won, lost := first, second
	if won.status != 200 {
		won, lost = second, first
	}
	if won.status != 200 || lost.status != 400 || lost.body["error"] != "invalid_grant" {
		t.Fatalf("one code presented twice at once: %d %v and %d %v", first.status, first.body, second.status, second.body)
	}
	if _, err := b.authn.AuthenticateToken(ctx, won.body["access_token"].(string)); !isAPIError(err, 190, 467) {
		t.Errorf("the access token of a code presented twice: %v, want 190/467", err)
	}
}

// exchangeCode posts an authorization_code exchange as the World's app,
// without t (it runs on other goroutines).
func exchangeCode(b *bundle, code, verifier string) (int, map[string]any, error) {
	v := url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {identitytest.RedirectURI},
		"code_verifier": {verifier}}
	req, _ := http.NewRequest(http.MethodPost, b.url+oauth.PathToken, strings.NewReader(v.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(url.QueryEscape(b.App.ClientID), url.QueryEscape(b.App.ClientSecret))
	res, err := b.client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer res.Body.Close()
	var out map[string]any
	err = json.NewDecoder(res.Body).Decode(&out)
	return res.StatusCode, out, err
}
