package oauth_test

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"golang.org/x/oauth2"

	"github.com/svcplatform/svc/gateway/internal/identity"
	"github.com/svcplatform/svc/gateway/internal/identity/identitytest"
	"github.com/svcplatform/svc/gateway/internal/oauth"
)

// BenchmarkTokenExchange measures authorization_code + PKCE exchanges per
// second over real HTTP on loopback against PostgreSQL, with the gateway's
// pool size (16). The codes are issued before the timer starts.
//
//	go test -run '^$' -bench TokenExchange -benchtime 5000x ./gateway/internal/oauth/
func BenchmarkTokenExchange(b *testing.B) {
	b.Run("scope=public_profile", func(b *testing.B) { benchmarkExchange(b, "public_profile") })
	b.Run("scope=openid(id_token)", func(b *testing.B) { benchmarkExchange(b, "openid", "public_profile") })
}

func benchmarkExchange(b *testing.B, scopes ...string) {
	bb := setup(b)
	ctx := context.Background()
	cfg, err := pgxpool.ParseConfig(bb.URL)
	if err != nil {
		b.Fatal(err)
	}
	cfg.MaxConns = 16
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer pool.Close()
	// Serve from a server over the larger pool; the World's own stays for setup.
	bb = setupOn(b, bb.World, identity.New(pool))

	verifier := oauth2.GenerateVerifier()
	challenge := oauth.S256(verifier)
	codes := make(chan string, b.N)
	for range b.N {
		code, err := bb.as.IssueCode(ctx, bb.App.ID, bb.Owner.ID, identitytest.RedirectURI, challenge, scopes)
		if err != nil {
			b.Fatal(err)
		}
		codes <- code
	}
	close(codes)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	form := url.Values{"grant_type": {"authorization_code"}, "redirect_uri": {identitytest.RedirectURI},
		"code_verifier": {verifier}}
	b.SetParallelism(4)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			v := url.Values{"code": {<-codes}}
			for k, vs := range form {
				v[k] = vs
			}
			req, _ := http.NewRequest(http.MethodPost, bb.url+oauth.PathToken, strings.NewReader(v.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.SetBasicAuth(url.QueryEscape(bb.App.ClientID), url.QueryEscape(bb.App.ClientSecret))
			res, err := client.Do(req)
			if err != nil {
				b.Error(err)
				return
			}
			_, _ = io.Copy(io.Discard, res.Body) // so the connection is reused
			res.Body.Close()
			if res.StatusCode != http.StatusOK {
				b.Errorf("status %d", res.StatusCode)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "exchanges/s")
}
