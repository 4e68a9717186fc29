package apierr

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"connectrpc.com/connect"

	"github.com/svcplatform/svc/gateway/internal/observe"
)

// The rows of CONTRACT §3 that the gateway itself answers.
func TestConstructorsFollowTheContractTable(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name                  string
		err                   *Error
		status, code, subcode int
		transient             bool
	}{
		{"no token", NoToken(), 401, 104, 0, false},
		{"invalid token", InvalidToken(), 401, 190, 467, false},
		{"expired token", ExpiredToken(), 401, 190, 463, false},
		{"app key where a user token is needed", UserTokenRequired(), 403, 200, 2069001, false},
		{"missing scope", MissingScope("pages:manage"), 403, 10, 2069002, false},
		{"not a Page admin", NotPageAdmin(), 403, 200, 2069003, false},
		{"not linked", NotLinked("svcchat"), 403, 10, 2018303, false},
		{"Page unavailable", PageUnavailable(), 403, 10, 2018304, false},
		{"invalid parameter", Invalid("content", "bad"), 400, 100, 0, false},
		{"body too large", TooLarge(1 << 20), 413, 100, 0, false},
		{"object does not exist", NotFound("Post 1"), 404, 100, 33, false},
		{"unknown node", UnknownNode("x/y"), 404, 2500, 0, false},
		{"unsupported version", UnknownVersion("v2"), 404, 2635, 0, false},
		{"plugin unavailable", Unavailable("The book plugin"), 503, 2, 0, true},
		{"anything else", Internal(errors.New("boom")), 500, 1, 0, false},
	}
	for _, tc := range cases {
		e := tc.err
		if e.HTTPStatus != tc.status || e.Code != tc.code || e.Subcode != tc.subcode || e.Transient != tc.transient || e.Type == "" {
			t.Errorf("%s: %+v", tc.name, e)
		}
		// The Connect form carries the same numbers back.
		back := FromConnect(ToConnect(e))
		if back.HTTPStatus != e.HTTPStatus || back.Code != e.Code || back.Subcode != e.Subcode || back.Transient != e.Transient {
			t.Errorf("%s: Connect round trip gave %+v", tc.name, back)
		}
	}
}

func TestWriteNeverShowsTheCauseAndCarriesTheTraceID(t *testing.T) {
	t.Parallel()
	r := httptest.NewRequest("GET", "/api/v1/graph", nil)
	r = r.WithContext(observe.WithTraceID(context.Background(), "trace123"))
	rec := httptest.NewRecorder()
	Write(rec, r, fmt.Errorf("wrapped: %w", Internal(errors.New("password=hunter2"))))
	var env struct {
		Error struct {
			Message   string `json:"message"`
			Code      int    `json:"code"`
			FBTraceID string `json:"fbtrace_id"`
		} `json:"error"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &env); err != nil {
		t.Fatal(err)
	}
	if rec.Code != 500 || env.Error.Code != 1 || env.Error.FBTraceID != "trace123" || rec.Header().Get(observe.TraceHeader) != "trace123" {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
	if strings.Contains(rec.Body.String(), "hunter2") {
		t.Fatal("the cause leaked into the body")
	}
	// A plain error and a too-large body map to their rows.
	if From(errors.New("x")).Code != 1 || From(&http.MaxBytesError{Limit: 10}).HTTPStatus != 413 {
		t.Fatal("From does not classify plain errors")
	}
	if From(connect.NewError(connect.CodeNotFound, errors.New("x"))).Subcode != 33 {
		t.Fatal("a Connect not-found is not 100/33")
	}
}
