package plugintest

import (
	"errors"
	"testing"

	"github.com/svcplatform/svc/plugins/sdk"
)

// WantRefusal fails the test unless err is a refusal (*sdk.Error) with the
// given HTTP status, code and subcode of CONTRACT §3, and returns it so
// that the test can check the field it names.
func WantRefusal(t testing.TB, err error, status, code, subcode int) *sdk.Error {
	t.Helper()
	var e *sdk.Error
	if !errors.As(err, &e) {
		t.Fatalf("got %v, want a refusal %d/%d/%d", err, status, code, subcode)
	}
	if e.HTTPStatus != status || e.Code != code || e.Subcode != subcode {
		t.Fatalf("got %d/%d/%d %q, want %d/%d/%d", e.HTTPStatus, e.Code, e.Subcode, e.Message, status, code, subcode)
	}
	return e
}
