package apierr_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/svcplatform/svc/gateway/internal/apierr"
)

func TestAJSONAnswerIsUTF8JSONAndNotStoredByDefault(t *testing.T) {
	t.Parallel()
	w := httptest.NewRecorder()
	apierr.WriteJSON(w, http.StatusCreated, map[string]string{"id": "1"})
	h := w.Result().Header
	if w.Code != http.StatusCreated || w.Body.String() != "{\"id\":\"1\"}\n" {
		t.Fatalf("answer = %d %q", w.Code, w.Body.String())
	}
	if h.Get("Content-Type") != "application/json; charset=utf-8" || h.Get("Cache-Control") != "no-store" || h.Get("Pragma") != "no-cache" {
		t.Fatalf("headers = %v", h)
	}
}

func TestACacheableJSONAnswerCarriesItsPolicyAndNoPragma(t *testing.T) {
	t.Parallel()
	w := httptest.NewRecorder()
	apierr.WriteJSONBody(w, http.StatusOK, []byte(`{}`), apierr.CacheControl("public, max-age=300"))
	h := w.Result().Header
	if h.Get("Cache-Control") != "public, max-age=300" || h.Get("Pragma") != "" || w.Body.String() != "{}" {
		t.Fatalf("headers = %v, body %q", h, w.Body.String())
	}
}

// Two answers never share a header value: the writer's shared values are
// replaced, not changed, by a handler that sets its own.
func TestAnAnswerChangingItsHeadersLeavesTheNextAnswersAlone(t *testing.T) {
	t.Parallel()
	first := httptest.NewRecorder()
	apierr.WriteJSONBody(first, http.StatusOK, []byte(`{}`))
	first.Header().Set("Cache-Control", "private")
	second := httptest.NewRecorder()
	apierr.WriteJSONBody(second, http.StatusOK, []byte(`{}`))
	if got := second.Result().Header.Get("Cache-Control"); got != "no-store" {
		t.Fatalf("Cache-Control = %q", got)
	}
}
