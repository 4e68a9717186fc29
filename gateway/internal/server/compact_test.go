package server_test

import (
	"bytes"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestRESTAndConnectJSONAnswersAreCompact checks issue 28 item 8: REST and
// Connect JSON answers carry no white space outside strings (protojson
// adds spaces at random, by build), so that the same message is always
// the same bytes, as Graph answers are.
func TestRESTAndConnectJSONAnswersAreCompact(t *testing.T) {
	t.Parallel()
	s := acceptingServer(t, false)
	rest := httptest.NewRecorder()
	s.ServeHTTP(rest, httptest.NewRequest("GET", "/api/v1/platform/changelog", nil))
	req := httptest.NewRequest("POST", "/svc.platform.v1.PlatformService/GetChangelog", strings.NewReader("{}"))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Connect-Protocol-Version", "1")
	conn := httptest.NewRecorder()
	s.ServeHTTP(conn, req)
	for name, rec := range map[string]*httptest.ResponseRecorder{"REST": rest, "Connect": conn} {
		if rec.Code/100 != 2 {
			t.Fatalf("%s: %d %s", name, rec.Code, rec.Body)
		}
		var compact bytes.Buffer
		if err := json.Compact(&compact, rec.Body.Bytes()); err != nil {
			t.Fatal(err)
		}
		if compact.String() != rec.Body.String() {
			t.Errorf("%s answer is not compact: %.200s", name, rec.Body)
		}
	}
}
