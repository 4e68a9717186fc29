package auth_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/svcplatform/svc/gateway/internal/auth"
)

func TestCookieRequestsThatChangeStateNeedTheSessionsCSRFToken(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	sess, err := b.IDs.Sessions.CreateSession(ctx, b.Owner.ID)
	if err != nil {
		t.Fatal(err)
	}
	other, err := b.IDs.Sessions.CreateSession(ctx, b.Owner.ID)
	if err != nil {
		t.Fatal(err)
	}
	good := auth.CSRFToken(sess.Token)
	for _, tc := range []struct {
		name    string
		method  string
		header  map[string]string
		refused bool
	}{
		{"a cookie GET needs no token", http.MethodGet, nil, false},
		{"a cookie POST with the session's token passes", http.MethodPost, map[string]string{auth.CSRFHeader: good}, false},
		{"a cookie POST from our own origin with the token passes", http.MethodPost,
			map[string]string{auth.CSRFHeader: good, "Origin": "http://example.com", "Sec-Fetch-Site": "same-origin"}, false},
		{"a cookie POST without the token is refused with 2069008", http.MethodPost, nil, true},
		{"a cookie DELETE without the token is refused with 2069008", http.MethodDelete, nil, true},
		{"a cookie POST with another session's token is refused", http.MethodPost, map[string]string{auth.CSRFHeader: auth.CSRFToken(other.Token)}, true},
		{"a cookie POST from another origin is refused even with the token", http.MethodPost,
			map[string]string{auth.CSRFHeader: good, "Origin": "https://evil.example"}, true},
		{"a cookie POST the browser marks cross-site is refused even with the token", http.MethodPost,
			map[string]string{auth.CSRFHeader: good, "Sec-Fetch-Site": "cross-site"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest(tc.method, "http://example.com/api/v1/graph", nil)
			r.AddCookie(&http.Cookie{Name: auth.SessionCookie, Value: sess.Token})
			for k, v := range tc.header {
				r.Header.Set(k, v)
			}
			p, err := b.authn.Authenticate(ctx, r)
			if !tc.refused {
				if err != nil || p == nil || p.UserID != b.Owner.ID {
					t.Fatalf("Authenticate = %+v, %v", p, err)
				}
				return
			}
			wantAPIError(t, err, 403, 200, 2069008)
		})
	}
	t.Run("a bearer session needs no token: browsers never add it on their own", func(t *testing.T) {
		r := httptest.NewRequest(http.MethodPost, "/api/v1/graph", nil)
		r.Header.Set("Authorization", "Bearer "+sess.Token)
		if p, err := b.authn.Authenticate(ctx, r); err != nil || p == nil {
			t.Fatalf("Authenticate = %+v, %v", p, err)
		}
	})
	t.Run("the session endpoint tells a cookie page its token", func(t *testing.T) {
		rec := httptest.NewRecorder()
		r := httptest.NewRequest(http.MethodGet, "/api/mobile/auth/session", nil)
		r.AddCookie(&http.Cookie{Name: auth.SessionCookie, Value: sess.Token})
		b.authn.SessionHandler().ServeHTTP(rec, r)
		var got struct{ UserID, CSRFToken string }
		if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil || rec.Code != 200 {
			t.Fatalf("%d %s", rec.Code, rec.Body)
		}
		if got.UserID != b.Owner.ID || got.CSRFToken != good {
			t.Fatalf("session info = %s", rec.Body)
		}
		if rec.Header().Get("Access-Control-Allow-Origin") != "" {
			t.Fatal("the session endpoint must not be readable by other origins")
		}
	})
}
